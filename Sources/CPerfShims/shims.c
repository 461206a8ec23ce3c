// Out-of-line wrappers for syscalls that have no glibc wrapper Swift can see.
#define _GNU_SOURCE
#include "CPerfShims.h"
#include <sys/syscall.h>
#include <unistd.h>

int32_t perf_gettid(void) { return (int32_t)syscall(SYS_gettid); }

int perf_tgkill(int32_t tgid, int32_t tid, int sig) { return (int)syscall(SYS_tgkill, tgid, tid, sig); }


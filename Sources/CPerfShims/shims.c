// Out-of-line wrappers for syscalls that have no glibc wrapper Swift can see.
#define _GNU_SOURCE
#include "CPerfShims.h"
#include <sys/syscall.h>
#include <unistd.h>

int32_t perf_gettid(void) { return (int32_t)syscall(SYS_gettid); }

int perf_tgkill(int32_t tgid, int32_t tid, int sig) { return (int)syscall(SYS_tgkill, tgid, tid, sig); }

#include <dlfcn.h>

typedef void *(*perf_swift_alloc_fn)(const void *metadata, size_t size, size_t alignMask);

static perf_swift_alloc_fn perf_original_alloc;
static uint64_t perf_alloc_counter;

static void *perf_counting_alloc(const void *metadata, size_t size, size_t alignMask) {
    __atomic_fetch_add(&perf_alloc_counter, 1, __ATOMIC_RELAXED);
    return perf_original_alloc(metadata, size, alignMask);
}

int perf_alloc_counter_install(void) {
    perf_swift_alloc_fn *hook = (perf_swift_alloc_fn *)dlsym(RTLD_DEFAULT, "_swift_allocObject");
    if (hook == NULL) return 0;
    if (*hook != perf_counting_alloc) {
        perf_original_alloc = *hook;
        *hook = perf_counting_alloc;
    }
    return 1;
}

uint64_t perf_alloc_count(void) { return __atomic_load_n(&perf_alloc_counter, __ATOMIC_RELAXED); }

// Unwinds another thread of this process that is blocked in a system call, without signalling it.
//
// Why not SIGPROF: a handler that runs on a thread blocked in sleep, poll or read cuts the call
// short (EINTR, or a short sleep), whatever SA_RESTART says, so sampling would change what the
// program does. A blocked thread needs no signal anyway: the kernel reports its stack pointer
// and program counter at the call in /proc/self/task/<tid>/syscall, its stack is plain memory of
// our own process, and the loaded images' .eh_frame says how to find each caller from there.
//
// The walk: read the syscall line; copy the stack from sp to the top of its mapping (at most
// 512 KiB) with one process_vm_readv; read the line again (a thread that moved meanwhile gives
// a torn copy: report it); then run DWARF call frame information over the copy, frame by frame.
// At the call only rsp and rip are known. The first frame-pointer function met before any frame
// saved rbp needs rbp to find its CFA: the walk then scans the stack for that function's frame
// record (saved rbp, return address). Every read is bounds-checked: stack reads against the copy
// (or through perf_read_memory), unwind-table reads against the image's mapped segments.
//
// This file: the syscall line, fault-free memory reads, the stack mapping and the walk driver.
// The loaded images and stack scans are in remote_unwind_images.c, the unwind-table readers in
// remote_unwind_dwarf.c, one step to the caller in remote_unwind_step.c.
#define _GNU_SOURCE
#include "CPerfRemoteUnwind.h"
#include "remote_unwind_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <elf.h>
#include <link.h>
#endif

// MARK: - /proc/self/task/<tid>/syscall

// Reads a small /proc file whole (open/read/close). Returns the bytes read, or -1.
static ssize_t perf_read_proc_file(const char *path, char *buffer, size_t capacity) {
    int fd;
    do {
        fd = open(path, O_RDONLY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return -1;
    size_t used = 0;
    while (used < capacity) {
        ssize_t n = read(fd, buffer + used, capacity - used);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            close(fd);
            return -1;
        }
        if (n == 0) break;
        used += (size_t)n;
    }
    close(fd);
    return (ssize_t)used;
}

// Appends the decimal digits of `value` (> 0) at `out`; returns the end.
static char *perf_append_decimal(char *out, uint32_t value) {
    char digits[10];
    int count = 0;
    do {
        digits[count++] = (char)('0' + value % 10);
        value /= 10;
    } while (value != 0);
    while (count > 0) *out++ = digits[--count];
    return out;
}

static const char *perf_skip_spaces(const char *at, const char *end) {
    while (at < end && *at == ' ') at++;
    return at;
}

// Parses an optionally negative decimal number. Returns the position after it, or NULL.
static const char *perf_parse_decimal(const char *at, const char *end, int64_t *out) {
    at = perf_skip_spaces(at, end);
    bool negative = at < end && *at == '-';
    if (negative) at++;
    const char *digits = at;
    int64_t value = 0;
    while (at < end && *at >= '0' && *at <= '9' && at - digits < 18) value = value * 10 + (*at++ - '0');
    if (at == digits) return NULL;
    *out = negative ? -value : value;
    return at;
}

// Parses "0x" followed by up to 16 hex digits. Returns the position after it, or NULL.
static const char *perf_parse_hex(const char *at, const char *end, uint64_t *out) {
    at = perf_skip_spaces(at, end);
    if (end - at < 3 || at[0] != '0' || at[1] != 'x') return NULL;
    at += 2;
    const char *digits = at;
    uint64_t value = 0;
    for (; at < end && at - digits < 16; at++) {
        char c = *at;
        int digit = c >= '0' && c <= '9' ? c - '0' : (c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1);
        if (digit < 0) break;
        value = value << 4 | (uint64_t)digit;
    }
    if (at == digits) return NULL;
    *out = value;
    return at;
}

int perf_thread_read_syscall(int32_t tid, perf_thread_syscall *out) {
    memset(out, 0, sizeof *out);
    out->state = PERF_THREAD_GONE;
    out->nr = -1;
    if (tid <= 0) return -1;
    char path[48] = "/proc/self/task/";
    char *end = perf_append_decimal(path + strlen(path), (uint32_t)tid);
    memcpy(end, "/syscall", sizeof "/syscall");
    // "nr 0xa1 ... 0xa6 0xsp 0xpc\n" is at most ~180 bytes.
    char line[256];
    ssize_t length = perf_read_proc_file(path, line, sizeof line);
    if (length <= 0) return -1;
    const char *at = line, *limit = line + length;
    if (length >= 7 && memcmp(line, "running", 7) == 0) {
        out->state = PERF_THREAD_RUNNING;
        return 0;
    }
    int64_t nr;
    if ((at = perf_parse_decimal(at, limit, &nr)) == NULL) return -1;
    if (nr >= 0) {
        for (int i = 0; i < 6 && at != NULL; i++) at = perf_parse_hex(at, limit, &out->args[i]);
    }
    uint64_t sp = 0, pc = 0;
    if (at != NULL) at = perf_parse_hex(at, limit, &sp);
    if (at != NULL) at = perf_parse_hex(at, limit, &pc);
    if (at == NULL) {
        memset(out->args, 0, sizeof out->args);
        return -1;
    }
    out->state = nr >= 0 ? PERF_THREAD_BLOCKED : PERF_THREAD_USER;
    out->nr = nr >= 0 ? nr : -1;
    out->sp = sp;
    out->pc = pc;
    return 0;
}

// MARK: - Fault-free memory reads

// 1 once process_vm_readv turned out not to be permitted (seccomp, old kernel).
static int perf_vm_readv_unavailable;

size_t perf_read_memory(uintptr_t address, void *buffer, size_t length) {
    // Page 0 is never mapped; addresses from 2^63 up are the kernel's (and not a valid offset of
    // /proc/self/mem).
    if (buffer == NULL || length == 0 || address < 4096 || address > (uintptr_t)INT64_MAX) return 0;
    if (length > (uintptr_t)INT64_MAX - address) length = (size_t)((uintptr_t)INT64_MAX - address);
    int saved_errno = errno;
    uint8_t *out = buffer;
    size_t done = 0;
    if (!__atomic_load_n(&perf_vm_readv_unavailable, __ATOMIC_RELAXED)) {
        pid_t self = getpid();
        while (done < length) {
            struct iovec local = {out + done, length - done};
            struct iovec remote = {(void *)(address + done), length - done};
            // A range that runs into unmapped memory copies up to there and returns the count.
            ssize_t n = process_vm_readv(self, &local, 1, &remote, 1, 0);
            if (n > 0) {
                done += (size_t)n;
            } else if (n < 0 && errno == EINTR) {
                continue;
            } else if (n < 0 && done == 0 && (errno == ENOSYS || errno == EPERM)) {
                __atomic_store_n(&perf_vm_readv_unavailable, 1, __ATOMIC_RELAXED);
                break;
            } else {
                errno = saved_errno;
                return done;  // EFAULT: unmapped from here on
            }
        }
        if (done == length) {
            errno = saved_errno;
            return done;
        }
    }
    // Opened per read, never kept: a descriptor held open could be closed by a host that closes
    // every descriptor it did not open, and its number reused for one of the host's files.
    int fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
    while (fd >= 0 && done < length) {
        ssize_t n = pread(fd, out + done, length - done, (off_t)(address + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;  // EIO: unmapped from here on
        done += (size_t)n;
    }
    if (fd >= 0) close(fd);
    errno = saved_errno;
    return done;
}

#if defined(__x86_64__)

// MARK: - The stack copy

// Finds the line of /proc/self/maps whose range contains `address`. The file is read in chunks
// and parsed as it streams (only each line's "start-end" matters); lines are sorted by address,
// so the read stops at the first line past it. Returns 1 when found.
static int perf_find_mapping(uintptr_t address, uintptr_t *start_out, uintptr_t *end_out) {
    int fd;
    do {
        fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return 0;
    enum { START, END, SKIP } field = START;
    uintptr_t start = 0, end = 0;
    int digits = 0, found = 0, finished = 0;
    size_t total = 0;
    char chunk[8192];
    // 32 MiB of maps is ~300,000 mappings: give up rather than spin.
    while (!finished && total < (32u << 20)) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        total += (size_t)n;
        for (ssize_t i = 0; i < n && !finished; i++) {
            char c = chunk[i];
            if (c == '\n') {
                field = START;
                start = end = 0;
                digits = 0;
                continue;
            }
            if (field == SKIP) continue;
            int digit = c >= '0' && c <= '9' ? c - '0' : (c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1);
            if (digit >= 0 && digits < 16) {
                if (field == START) start = start << 4 | (uintptr_t)digit;
                else end = end << 4 | (uintptr_t)digit;
                digits++;
            } else if (field == START && c == '-' && digits > 0) {
                field = END;
                digits = 0;
            } else if (field == END && c == ' ' && digits > 0) {
                if (address >= start && address < end) {
                    *start_out = start;
                    *end_out = end;
                    found = finished = 1;
                } else if (start > address) {
                    finished = 1;
                }
                field = SKIP;
            } else {
                field = SKIP;  // not a line we understand
            }
        }
    }
    close(fd);
    return found;
}

// MARK: - The walk

// Walks from the registers at the system call to the outermost frame or `capacity` frames.
static int perf_unwind_frames(const perf_unwind_context *context, uint64_t sp, uint64_t pc, uintptr_t *frames,
                              int capacity) {
    perf_regs regs = {{0}, 0};
    regs.value[PERF_REG_RSP] = sp;
    regs.value[PERF_REG_RIP] = pc;
    regs.known = 1u << PERF_REG_RSP | 1u << PERF_REG_RIP;
    frames[0] = (uintptr_t)pc;
    int count = 1;
    bool exact = true;
    while (count < capacity) {
        bool signal_frame;
        if (perf_step(context, &regs, exact, &signal_frame) != STEP_CALLER) break;
        uintptr_t caller = (uintptr_t)regs.value[PERF_REG_RIP];
        if (caller == 0 || perf_code_segment(context, signal_frame ? caller : caller - 1) == NULL) break;
        frames[count++] = caller;
        exact = signal_frame;
    }
    return count;
}

// The unwind proper runs under the dynamic loader's lock, so no image can be unmapped while its
// tables are read: perf_walk_locked is the callback of dl_iterate_phdr, which calls
// dl_iterate_phdr again (its lock is recursive) to list every image, then walks, then stops the
// outer iteration.
typedef struct {
    perf_unwind_context *context;
    uint64_t sp, pc;
    uintptr_t *frames;
    int capacity;
    int count;
} perf_walk;

static int perf_walk_locked(struct dl_phdr_info *info, size_t size, void *data) {
    (void)info;
    (void)size;
    perf_walk *walk = data;
    walk->context->image_count = walk->context->segment_count = 0;
    dl_iterate_phdr(perf_collect_image, walk->context);
    perf_index_code(walk->context);
    walk->count = perf_unwind_frames(walk->context, walk->sp, walk->pc, walk->frames, walk->capacity);
    return 1;
}

// Largest stack copy: deeper stacks are unwound as far as the copy goes (frames above it are
// read word by word through perf_read_memory).
#define PERF_STACK_COPY_MAX (512u << 10)

int perf_remote_unwind(int32_t tid, uintptr_t *frames, int capacity, perf_thread_syscall *syscall_out) {
    perf_thread_syscall before, after;
    perf_thread_read_syscall(tid, &before);
    // The calling thread reads itself "blocked" in that very read; it is running.
    if (before.state != PERF_THREAD_GONE && tid == (int32_t)syscall(SYS_gettid)) {
        memset(&before, 0, sizeof before);
        before.state = PERF_THREAD_RUNNING;
        before.nr = -1;
    }
    if (syscall_out != NULL) *syscall_out = before;
    if (before.state != PERF_THREAD_BLOCKED) return -1;
    if (frames == NULL || capacity < 1) return -4;

    uintptr_t sp = (uintptr_t)before.sp, start, end;
    if (!perf_find_mapping(sp, &start, &end)) return -4;
    size_t length = end - sp < PERF_STACK_COPY_MAX ? end - sp : PERF_STACK_COPY_MAX;
    perf_unwind_context *context = malloc(sizeof *context);
    uint8_t *copy = malloc(length);
    if (context == NULL || copy == NULL) {
        free(context);
        free(copy);
        return -4;
    }
    size_t copied = perf_read_memory(sp, copy, length);
    perf_thread_read_syscall(tid, &after);
    int result;
    if (copied < 16) {
        result = -4;
    } else if (after.state != PERF_THREAD_BLOCKED || after.nr != before.nr || after.sp != before.sp ||
               after.pc != before.pc) {
        result = -2;
    } else {
        context->stack = copy;
        context->stack_low = sp;
        context->stack_high = sp + copied;
        perf_walk walk = {context, before.sp, before.pc, frames, capacity, 0};
        dl_iterate_phdr(perf_walk_locked, &walk);
        if (walk.count == 0) {  // no image at all (cannot happen in a running program)
            frames[0] = (uintptr_t)before.pc;
            walk.count = 1;
        }
        result = walk.count;
    }
    free(copy);
    free(context);
    return result;
}

#else  // not x86_64: the syscall file is read, the unwind is not implemented

int perf_remote_unwind(int32_t tid, uintptr_t *frames, int capacity, perf_thread_syscall *syscall_out) {
    (void)frames;
    (void)capacity;
    perf_thread_syscall call;
    perf_thread_read_syscall(tid, &call);
    if (syscall_out != NULL) *syscall_out = call;
    return call.state == PERF_THREAD_BLOCKED ? -3 : -1;
}

#endif

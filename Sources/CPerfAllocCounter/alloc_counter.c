// Replaces glibc's allocation entry points with counting forwarders to glibc's own allocator
// (the __libc_* aliases), as glibc's manual allows. The counter is thread-local so a test can
// measure its own thread while the test runner allocates on others.
#define _GNU_SOURCE
#include "CPerfAllocCounter.h"
#include <errno.h>
#include <stddef.h>

// Under AddressSanitizer, ThreadSanitizer or MemorySanitizer malloc belongs to the sanitizer's
// runtime: replacing it would run before that runtime starts (a test bundle built with
// --sanitize=thread died of SIGSEGV before its first test). There, nothing is replaced and
// perf_alloc_counter_available() says so, so allocation-counting tests report skipped.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define PERF_ALLOC_COUNTER_OFF 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PERF_ALLOC_COUNTER_OFF 1
#endif

#ifdef PERF_ALLOC_COUNTER_OFF

int perf_alloc_counter_available(void) { return 0; }
uint64_t perf_thread_alloc_count(void) { return 0; }
uint64_t perf_process_alloc_count(void) { return 0; }

#else

int perf_alloc_counter_available(void) { return 1; }


extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

static __thread uint64_t perf_thread_allocations;
static uint64_t perf_process_allocations;

static inline void perf_count_allocation(void) {
    perf_thread_allocations += 1;
    __atomic_fetch_add(&perf_process_allocations, 1, __ATOMIC_RELAXED);
}

void *malloc(size_t size) {
    perf_count_allocation();
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    perf_count_allocation();
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    perf_count_allocation();
    return __libc_realloc(pointer, size);
}

void free(void *pointer) { __libc_free(pointer); }

void *memalign(size_t alignment, size_t size) {
    perf_count_allocation();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    perf_count_allocation();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
    perf_count_allocation();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL && size != 0) return ENOMEM;
    *result = pointer;
    return 0;
}

uint64_t perf_thread_alloc_count(void) { return perf_thread_allocations; }

uint64_t perf_process_alloc_count(void) { return __atomic_load_n(&perf_process_allocations, __ATOMIC_RELAXED); }

#endif

// MARK: - Test support

#include <errno.h>
#include <sys/epoll.h>
#include <unistd.h>

int perf_test_epoll_wait(int timeout_ms, int *error) {
    int epoll = epoll_create1(EPOLL_CLOEXEC);
    if (epoll < 0) {
        *error = errno;
        return -1;
    }
    struct epoll_event event;
    int result = epoll_wait(epoll, &event, 1, timeout_ms);
    *error = result < 0 ? errno : 0;
    close(epoll);
    return result;
}

#include <malloc.h>

int64_t perf_heap_in_use_bytes(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 info = mallinfo2();
    return (int64_t)(info.uordblks + info.hblkhd);
#else
    return -1;
#endif
}

#include <sched.h>

int perf_bench_cpus_0_and_1_usable(int *error) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) {
        *error = errno;
        return 0;
    }
    *error = 0;
    return CPU_ISSET(0, &set) && CPU_ISSET(1, &set);
}

int perf_bench_pin_thread(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set) == 0 ? 0 : errno;
}

// Counts heap allocations per thread, for benchmarks and tests that prove a path allocates
// nothing. Linked only into perf-bench and the test bundles: it replaces malloc for the whole
// process it is linked into, so no library product may depend on it.
#ifndef CPERFALLOCCOUNTER_H
#define CPERFALLOCCOUNTER_H

#include <stdint.h>

/// 1 when allocations are counted; 0 in a build under a sanitizer, whose runtime owns malloc
/// (then both counts stay 0 and allocation tests must report skipped, not passed).
int perf_alloc_counter_available(void);

/// malloc/calloc/realloc/aligned allocations made by the calling thread since it started.
uint64_t perf_thread_alloc_count(void);

/// Allocations made by every thread of the process.
uint64_t perf_process_alloc_count(void);

/// Heap bytes the process's allocator has handed out and not taken back (glibc's mallinfo2:
/// in-use chunks of every arena plus mmapped chunks), or -1 where it cannot say. Unlike RSS, it
/// leaves out memory the allocator keeps after a free, so it names growth the program holds.
int64_t perf_heap_in_use_bytes(void);
/// Test support (the watchdog matrix): waits on a new, empty epoll instance for `timeout_ms`,
/// as a service's event loop does. Returns epoll_wait's result; `*error` gets errno on failure.
/// Swift's Glibc module does not export <sys/epoll.h>.
int perf_test_epoll_wait(int timeout_ms, int *error);

/// Benchmark support: 1 when CPUs 0 and 1 are both online and in the process's affinity mask,
/// 0 when not (`*error` gets errno if sched_getaffinity failed). Swift's Glibc module does not
/// export sched_getaffinity/sched_setaffinity (they need _GNU_SOURCE).
int perf_bench_cpus_0_and_1_usable(int *error);

/// Benchmark support: pins the calling thread to `cpu`. 0 on success, else errno.
int perf_bench_pin_thread(int cpu);

#endif

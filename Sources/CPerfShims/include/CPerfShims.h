// C declarations and tiny inline helpers that Swift's Glibc module does not export.
// Everything here is either a declaration of a libc symbol or a static inline function the
// Swift compiler can inline into hot paths (relaxed atomics on raw memory, the monotonic clock).
#ifndef CPERFSHIMS_H
#define CPERFSHIMS_H

#include <stdint.h>
#include <stddef.h>
#include <time.h>
#include "CPerfStackSampler.h"

#ifdef __cplusplus
extern "C" {
#endif

/// CLOCK_MONOTONIC in nanoseconds (vDSO; no syscall).
static inline uint64_t perf_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/// CLOCK_BOOTTIME in nanoseconds (includes time suspended).
static inline uint64_t perf_boottime_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/// CLOCK_REALTIME in nanoseconds since the Unix epoch.
static inline uint64_t perf_realtime_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

// Relaxed atomics on raw memory: Swift's `Atomic` must be a stored property, which rules out
// arrays of counters allocated once (histogram buckets, ring slots).
static inline uint64_t perf_atomic_load_u64(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
static inline void perf_atomic_store_u64(uint64_t *p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
static inline uint64_t perf_atomic_add_u64(uint64_t *p, uint64_t v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
static inline int perf_atomic_cas_u64(uint64_t *p, uint64_t expected, uint64_t desired) {
    return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}
static inline const void *perf_atomic_load_ptr_acquire(const void *const *p) {
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
static inline int perf_atomic_cas_ptr(const void **p, const void *expected, const void *desired) {
    return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/// glibc's backtrace(3): not exported by Swift's Glibc module.
int backtrace(void **buffer, int size);
/// The kernel thread id of the calling thread.
int32_t perf_gettid(void);
/// Sends a signal to one thread of this process.
int perf_tgkill(int32_t tgid, int32_t tid, int sig);

// Per-thread histogram stripes (HistogramRegistry). A thread takes a stripe index on its first
// record and keeps it until it exits. Indices below PERF_EXCLUSIVE_STRIPES belong to one living
// thread at a time, so that thread may update its stripe with plain (relaxed) loads and stores;
// threads that find every exclusive index taken share the PERF_SHARED_STRIPES indices above them
// round-robin and must use atomic read-modify-writes there.
#define PERF_EXCLUSIVE_STRIPES 16
#define PERF_SHARED_STRIPES 16

/// This thread's stripe index plus one; 0 until the thread first asks for it.
extern __thread uint32_t perf_stripe_index_plus_one;
/// Slow path of `perf_thread_stripe`: claims a free exclusive index (acquiring whatever the
/// previous owner wrote) or, when all are taken, a shared one; arranges the release at thread exit.
uint32_t perf_thread_stripe_assign(void);

/// The calling thread's stripe index in [0, PERF_EXCLUSIVE_STRIPES + PERF_SHARED_STRIPES).
static inline uint32_t perf_thread_stripe(void) {
    uint32_t plus_one = perf_stripe_index_plus_one;
    if (__builtin_expect(plus_one == 0, 0)) return perf_thread_stripe_assign();
    return plus_one - 1;
}

#ifdef __cplusplus
}
#endif

#endif

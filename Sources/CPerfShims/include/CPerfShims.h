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

#ifdef __cplusplus
}
#endif

#endif

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

/// The calling thread's kernel id, cached per thread (one syscall per thread, ever).
extern __thread int32_t perf_cached_tid;
static inline int32_t perf_thread_tid(void) {
    int32_t tid = perf_cached_tid;
    if (__builtin_expect(tid == 0, 0)) {
        tid = perf_gettid();
        perf_cached_tid = tid;
    }
    return tid;
}

// The span flight recorder: a fixed ring of the most recent span ends. Writers take a ticket
// with one relaxed fetch-add and fill the slot it names under a per-slot sequence number (odd
// while writing, 2 × ticket + 2 when complete), so a reader copies only whole entries and never
// blocks a writer. A slot is one cache line, so two threads ending spans do not share lines.
typedef struct perf_flight_slot {
    uint64_t seq;
    /// The span name's UTF-8 bytes (a StaticString's storage: valid for the process lifetime),
    /// or NULL when `name_len` holds a single Unicode scalar with bit 63 set.
    const void *name;
    uint64_t name_len;
    uint64_t start_ns;
    uint64_t duration_ns;
    /// UINT64_MAX when the span had no budget.
    uint64_t budget_ns;
    int32_t tid;
    uint32_t exit;
    uint64_t reserved;
} perf_flight_slot;

typedef struct perf_flight_ring {
    /// Tickets handed out so far: the number of spans ever recorded.
    uint64_t head;
    char head_line[56];
    uint64_t mask;
    perf_flight_slot *slots;
} perf_flight_ring;

/// A ring of `capacity` slots (a power of two ≥ 1), or NULL when memory is short.
perf_flight_ring *perf_flight_ring_create(uint64_t capacity);
void perf_flight_ring_destroy(perf_flight_ring *ring);
/// Copies up to `max` whole entries, oldest first, into `out`; returns how many. `head_out`
/// receives the head seen, i.e. how many spans had been recorded.
uint64_t perf_flight_ring_read(const perf_flight_ring *ring, perf_flight_slot *out, uint64_t max, uint64_t *head_out);

/// Records one span end. Lock-free and allocation-free.
static inline void perf_flight_record(perf_flight_ring *ring, const void *name, uint64_t name_len,
                                      uint64_t start_ns, uint64_t duration_ns, uint64_t budget_ns, uint32_t exit) {
    uint64_t ticket = __atomic_fetch_add(&ring->head, 1, __ATOMIC_RELAXED);
    perf_flight_slot *slot = &ring->slots[ticket & ring->mask];
    __atomic_store_n(&slot->seq, 2 * ticket + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    __atomic_store_n(&slot->name, name, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->name_len, name_len, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->start_ns, start_ns, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->duration_ns, duration_ns, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->budget_ns, budget_ns, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->tid, perf_thread_tid(), __ATOMIC_RELAXED);
    __atomic_store_n(&slot->exit, exit, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->seq, 2 * ticket + 2, __ATOMIC_RELEASE);
}

#ifdef __cplusplus
}
#endif

#endif

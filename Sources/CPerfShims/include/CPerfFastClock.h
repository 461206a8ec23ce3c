// The span clock: the TSC scaled onto the CLOCK_MONOTONIC timeline, when a calibrator has enabled
// it, and CLOCK_MONOTONIC itself otherwise. Read inline on the span hot path (rdtsc ≈ 10 ns against
// ≈ 25 ns for clock_gettime through the vDSO on the machines this was measured on).
#ifndef CPERFFASTCLOCK_H
#define CPERFFASTCLOCK_H

#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Conversion parameters, published by one writer (the calibrator) under a sequence lock:
/// `seq` is odd while a write is in progress. `mult == 0` means "disabled: read CLOCK_MONOTONIC".
/// ns = base_mono + ((tsc - base_tsc) * mult) >> shift, where `shift` is always
/// `PERF_FAST_CLOCK_SHIFT` once published (the publisher rescales `mult`), so the span path shifts
/// by a constant. One cache line (the global is aligned to 64), read-mostly.
typedef struct perf_fast_clock {
    uint64_t seq;
    uint64_t mult;
    uint64_t base_tsc;
    uint64_t base_mono;
    uint64_t shift;
    /// base_mono - ((base_tsc * mult) >> shift), wrapping: what the span path adds to the scaled
    /// counter, so a read needs two parameters and no subtraction (see perf_fast_ns_from).
    uint64_t offset;
    uint64_t padding[2];
} perf_fast_clock;

/// The shift of every published parameter set: 2^-32 ns of resolution per tick.
#define PERF_FAST_CLOCK_SHIFT 32

/// The process's span clock (defined in fast_clock.c, so every module shares one copy).
extern perf_fast_clock perf_fast_clock_global;

/// The process's span clock, for the calibrator (Swift does not touch C globals directly).
perf_fast_clock *perf_fast_clock_shared(void);

/// Publishes new parameters (mult 0 disables). One writer at a time. A `shift` other than
/// `PERF_FAST_CLOCK_SHIFT` is rescaled to it (exactly, for shifts up to 32).
void perf_fast_clock_publish(perf_fast_clock *clock, uint64_t mult, uint32_t shift, uint64_t base_tsc,
                             uint64_t base_mono);

/// 1 when this build can read a TSC at all (x86_64).
static inline int perf_tsc_supported(void) {
#if defined(__x86_64__)
    return 1;
#else
    return 0;
#endif
}

/// The time-stamp counter (plain rdtsc: not ordered against surrounding loads, which a span's
/// begin and end do not need). 0 where there is none.
static inline uint64_t perf_rdtsc(void) {
#if defined(__x86_64__)
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
#else
    return 0;
#endif
}

static inline uint64_t perf_fast_clock_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/// `tsc` on the CLOCK_MONOTONIC timeline under one set of parameters (`mult` != 0).
static inline uint64_t perf_fast_ns_convert(uint64_t tsc, uint64_t mult, uint64_t shift, uint64_t base_tsc,
                                            uint64_t base_mono) {
    if (__builtin_expect(tsc >= base_tsc, 1)) {
        return base_mono + (uint64_t)(((unsigned __int128)(tsc - base_tsc) * mult) >> shift);
    }
    // Read on a CPU a few cycles behind the calibrator's: scale backwards.
    return base_mono - (uint64_t)(((unsigned __int128)(base_tsc - tsc) * mult) >> shift);
}

/// The span path's form of perf_fast_ns_convert (shift PERF_FAST_CLOCK_SHIFT): the counter scaled
/// whole, then moved onto CLOCK_MONOTONIC by `offset` (perf_fast_clock_offset). It differs from
/// the base form by at most the nanosecond's rounding for any reading, before or after the base:
/// the wrapping difference of two scaled readings is exact below 2^64 ns.
static inline uint64_t perf_fast_ns_scaled(uint64_t tsc, uint64_t mult, uint64_t offset) {
    return (uint64_t)(((unsigned __int128)tsc * mult) >> PERF_FAST_CLOCK_SHIFT) + offset;
}

/// The `offset` that makes perf_fast_ns_scaled read `base_mono` at `base_tsc`.
static inline uint64_t perf_fast_clock_offset(uint64_t mult, uint64_t base_tsc, uint64_t base_mono) {
    return base_mono - (uint64_t)(((unsigned __int128)base_tsc * mult) >> PERF_FAST_CLOCK_SHIFT);
}

/// Nanoseconds on the CLOCK_MONOTONIC timeline from `clock`: the scaled TSC when enabled, else
/// clock_gettime(CLOCK_MONOTONIC).
static inline uint64_t perf_fast_ns_from(const perf_fast_clock *clock) {
#if defined(__x86_64__)
    for (;;) {
        uint64_t seq = __atomic_load_n(&clock->seq, __ATOMIC_ACQUIRE);
        uint64_t mult = __atomic_load_n(&clock->mult, __ATOMIC_RELAXED);
        if (mult == 0) break;
        uint64_t offset = __atomic_load_n(&clock->offset, __ATOMIC_RELAXED);
        uint64_t tsc = perf_rdtsc();
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if ((seq & 1) != 0 || __atomic_load_n(&clock->seq, __ATOMIC_RELAXED) != seq) continue;
        return perf_fast_ns_scaled(tsc, mult, offset);
    }
#endif
    (void)clock;
    return perf_fast_clock_monotonic_ns();
}

/// The process's span clock: what SpanRecorder reads for the system clock.
static inline uint64_t perf_fast_ns(void) { return perf_fast_ns_from(&perf_fast_clock_global); }

/// A (tsc, CLOCK_MONOTONIC) pair taken as tightly as `tries` attempts allow: the mono reading is
/// the midpoint of the two around the rdtsc of the narrowest attempt. Returns that width in ns.
uint64_t perf_fast_clock_pair(uint32_t tries, uint64_t *tsc, uint64_t *mono);

#ifdef __cplusplus
}
#endif

#endif

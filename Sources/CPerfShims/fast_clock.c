// The one copy of the span clock's parameters, and its writer (see CPerfFastClock.h).
#include "CPerfFastClock.h"

__attribute__((aligned(64))) perf_fast_clock perf_fast_clock_global;

perf_fast_clock *perf_fast_clock_shared(void) { return &perf_fast_clock_global; }

void perf_fast_clock_publish(perf_fast_clock *clock, uint64_t mult, uint32_t shift, uint64_t base_tsc,
                             uint64_t base_mono) {
    if (shift < PERF_FAST_CLOCK_SHIFT) {
        mult <<= (PERF_FAST_CLOCK_SHIFT - shift);
    } else if (shift > PERF_FAST_CLOCK_SHIFT) {
        mult >>= (shift - PERF_FAST_CLOCK_SHIFT);
    }
    shift = PERF_FAST_CLOCK_SHIFT;
    uint64_t seq = __atomic_load_n(&clock->seq, __ATOMIC_RELAXED);
    __atomic_store_n(&clock->seq, seq + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    __atomic_store_n(&clock->mult, mult, __ATOMIC_RELAXED);
    __atomic_store_n(&clock->base_tsc, base_tsc, __ATOMIC_RELAXED);
    __atomic_store_n(&clock->base_mono, base_mono, __ATOMIC_RELAXED);
    __atomic_store_n(&clock->shift, (uint64_t)shift, __ATOMIC_RELAXED);
    __atomic_store_n(&clock->offset, perf_fast_clock_offset(mult, base_tsc, base_mono), __ATOMIC_RELAXED);
    __atomic_store_n(&clock->seq, seq + 2, __ATOMIC_RELEASE);
}

uint64_t perf_fast_clock_pair(uint32_t tries, uint64_t *tsc, uint64_t *mono) {
    uint64_t best = UINT64_MAX;
    if (tries == 0) tries = 1;
    for (uint32_t i = 0; i < tries; i++) {
        uint64_t before = perf_fast_clock_monotonic_ns();
        uint64_t t = perf_rdtsc();
        uint64_t after = perf_fast_clock_monotonic_ns();
        uint64_t width = after - before;
        if (width < best) {
            best = width;
            *tsc = t;
            *mono = before + width / 2;
        }
    }
    return best;
}

// Which measured spans each thread is running now, for the span sampler: a per-thread stack of
// open synchronous `Perf.measure` spans (and the asynchronous ones whose task runs on the thread
// at this moment), written only by its thread with plain stores under a sequence word, and read
// by the sampler thread, which never makes the owner wait.
#ifndef CPERFSAMPLEDSPANS_H
#define CPERFSAMPLEDSPANS_H

#include <stdint.h>
#include "CPerfReaders.h"  // PERF_TLS

#ifdef __cplusplus
extern "C" {
#endif

/// Entries a thread keeps; deeper spans are counted in `depth` but not sampled.
#define PERF_SAMPLED_DEPTH 8

typedef struct {
    /// Span-clock nanoseconds at the span's begin.
    uint64_t start_ns;
    /// Durations at or past this are over budget: budget + 1 (0: no budget, never sampled).
    uint64_t threshold_ns;
    /// The span's static name: its address << 16 | its length (as ChildScopes stores names).
    uint64_t name_word;
    /// Set by the sampler once the span is over budget: its profile slot (0: none). The owner
    /// reads it when the span ends; the slot's own key says whether it is really this span's.
    uint64_t profile;
    /// 0 for a synchronous span (its thread runs it from begin to end); for an asynchronous
    /// one, its id: the span is on this stack only while a job of its task runs here.
    uint64_t span_id;
} perf_sampled_entry;

typedef struct perf_sampled_thread {
    /// Even when the stack is stable, odd while its thread changes it.
    uint64_t sequence;
    uint32_t depth;
    int32_t tid;
    perf_sampled_entry entries[PERF_SAMPLED_DEPTH];
    struct perf_sampled_thread *next;
    struct perf_sampled_thread *prev;
    uint32_t registered;
} perf_sampled_thread;

/// Nonzero while a sampler runs: with none, a measure pushes nothing.
extern uint32_t perf_sampling_enabled;
extern PERF_TLS perf_sampled_thread perf_tls_sampled;

/// Links this thread's stack into the registry (once per thread; removed at thread exit).
void perf_sampled_register(void);

static inline uint32_t perf_sampling_is_enabled(void) {
    return __atomic_load_n(&perf_sampling_enabled, __ATOMIC_RELAXED);
}

static inline void perf_sampling_set_enabled(uint32_t enabled) {
    __atomic_store_n(&perf_sampling_enabled, enabled, __ATOMIC_RELEASE);
}

/// Pushes an open span onto this thread's stack; returns 1 if pushed (then pop it at its end), 0
/// when no sampler runs or the span has no budget (it is never over one).
static inline uint32_t perf_sampled_push_id(uint64_t start_ns, uint64_t threshold_ns, uint64_t name_word,
                                            uint64_t span_id) {
    if (!perf_sampling_is_enabled() || threshold_ns == 0) return 0;
    perf_sampled_thread *self = &perf_tls_sampled;
    if (__builtin_expect(!self->registered, 0)) perf_sampled_register();
    uint64_t sequence = self->sequence;
    __atomic_store_n(&self->sequence, sequence + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    uint32_t depth = self->depth;
    if (depth < PERF_SAMPLED_DEPTH) {
        perf_sampled_entry *entry = &self->entries[depth];
        __atomic_store_n(&entry->start_ns, start_ns, __ATOMIC_RELAXED);
        __atomic_store_n(&entry->threshold_ns, threshold_ns, __ATOMIC_RELAXED);
        __atomic_store_n(&entry->name_word, name_word, __ATOMIC_RELAXED);
        __atomic_store_n(&entry->profile, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&entry->span_id, span_id, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&self->depth, depth + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&self->sequence, sequence + 2, __ATOMIC_RELEASE);
    return 1;
}

/// `perf_sampled_push_id` for a synchronous span.
static inline uint32_t perf_sampled_push(uint64_t start_ns, uint64_t threshold_ns, uint64_t name_word) {
    return perf_sampled_push_id(start_ns, threshold_ns, name_word, 0);
}

/// Pops this thread's innermost span; returns its profile slot (0: none was taken).
static inline uint64_t perf_sampled_pop(void) {
    perf_sampled_thread *self = &perf_tls_sampled;
    uint64_t sequence = self->sequence;
    __atomic_store_n(&self->sequence, sequence + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    uint32_t depth = self->depth;
    uint64_t profile = 0;
    if (depth > 0) {
        depth -= 1;
        if (depth < PERF_SAMPLED_DEPTH) profile = __atomic_load_n(&self->entries[depth].profile, __ATOMIC_ACQUIRE);
        __atomic_store_n(&self->depth, depth, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&self->sequence, sequence + 2, __ATOMIC_RELEASE);
    return profile;
}

/// One thread's stack as the sampler read it.
typedef struct {
    perf_sampled_thread *thread;
    int32_t tid;
    uint32_t depth;
    perf_sampled_entry entries[PERF_SAMPLED_DEPTH];
} perf_sampled_view;

/// Copies the stacks of up to `capacity` threads that have an open span into `out`; returns how
/// many. A stack its thread was changing is read again, and skipped after a few tries (it is
/// read at the next tick).
int perf_sampled_snapshot(perf_sampled_view *out, int capacity);

/// Sets `entry`'s profile slot if it has none and still holds the span that began at `start_ns`
/// (read again after the store; on a mismatch the store is withdrawn). Returns 1 if set.
int perf_sampled_attach(perf_sampled_thread *thread, uint32_t index, uint64_t start_ns, uint64_t profile);

#ifdef __cplusplus
}
#endif
#endif

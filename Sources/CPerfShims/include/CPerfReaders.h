// Reader sections for the facade's recorder slot: what lets Perf.shutdown free a retired runtime
// once no thread can still be using it, without an atomic read-modify-write on the span path.
//
// A thread announces itself with a plain store to its own thread-local word before it loads the
// recorder slot, and clears it when done; it never touches a line another thread writes. The
// reclaimer clears the slot, then `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)` makes every
// thread's announcement visible (the barrier a reader's plain store lacks), then waits for each
// thread found inside a section to leave it (userspace RCU's membarrier flavour).
#ifndef CPERFREADERS_H
#define CPERFREADERS_H

#include <stdint.h>

/// Thread-locals the span path reads. The initial-exec model makes each access one %fs-relative
/// load: the default (general-dynamic) model has code that includes this header call
/// __tls_get_addr, which the linker relaxes to a plain address computation, but only after the
/// compiler saved and restored registers around what it took for a call. (A library that uses
/// these must be loaded with the program, not by dlopen: SwiftPM links it statically.)
#ifndef PERF_TLS
#define PERF_TLS __thread __attribute__((tls_model("initial-exec")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct perf_reader {
    /// Low 32 bits: nesting depth; high 32 bits: outermost sections entered (so a reclaimer that
    /// finds a thread inside a section sees it leave, even if it enters a new one at once).
    uint64_t state;
    struct perf_reader *next;
    struct perf_reader *prev;
    uint32_t registered;
} perf_reader;

/// The calling thread's reader word.
extern PERF_TLS perf_reader perf_tls_reader;
/// Slow path of `perf_reader_enter`: links this thread's word into the registry (once per thread).
void perf_reader_register(void);

/// Enters a reader section: between this and `perf_reader_exit`, whatever the thread loaded from
/// a slot the reclaimer clears stays valid. Sections nest. Returns the token to pass to
/// `perf_reader_exit`.
static inline uint64_t perf_reader_enter(void) {
    perf_reader *reader = &perf_tls_reader;
    if (__builtin_expect(!reader->registered, 0)) perf_reader_register();
    uint64_t state = reader->state;
    state += (uint32_t)state == 0 ? ((1ull << 32) | 1) : 1;
    __atomic_store_n(&reader->state, state, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    return state;
}

/// Leaves the reader section `entered` (what its `perf_reader_enter` returned): every access
/// made inside it happens before. Stores from the token rather than loading the word again,
/// which keeps a store-to-load round trip off the span path (a nested section leaves the word
/// as it found it).
static inline void perf_reader_exit(uint64_t entered) {
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&perf_tls_reader.state, entered - 1, __ATOMIC_RELEASE);
}

/// Call after clearing (or replacing) what readers load: returns once every thread that was
/// inside a section has left it, so nothing loaded before the store is in use any more. 0; -1
/// when the kernel offers no membarrier, 1 when the caller is itself inside a section (nothing
/// may then be freed).
int perf_reader_synchronize(void);

/// The address of the installed recorder when it reads the span clock, else 0: `Perf.begin`
/// compares it with the recorder slot it loaded and, when they match, begins a scoped span with
/// no reader section (it needs nothing of the recorder). A C global, so the span path reads it
/// with one load rather than through a Swift global's accessor.
extern uintptr_t perf_span_clock_recorder;

static inline uintptr_t perf_span_clock_recorder_load(void) {
    return __atomic_load_n(&perf_span_clock_recorder, __ATOMIC_RELAXED);
}

/// The parent scope of spans that begin on this thread now: 0 outside a synchronous
/// `Perf.measure`, 1 inside one that has no child yet, else a scope reference (ChildScopes).
extern PERF_TLS uint64_t perf_tls_scope;
/// How many asynchronous `Perf.measure` bodies run now, in any task: while none does, a span's
/// begin reads no task-local.
extern uint64_t perf_async_scopes;

static inline uint64_t perf_scope_get(void) { return perf_tls_scope; }
static inline void perf_scope_set(uint64_t scope) { perf_tls_scope = scope; }
static inline uint64_t perf_async_scopes_load(void) { return __atomic_load_n(&perf_async_scopes, __ATOMIC_RELAXED); }
static inline void perf_async_scopes_add(int64_t delta) {
    __atomic_fetch_add(&perf_async_scopes, (uint64_t)delta, __ATOMIC_RELAXED);
}

static inline void perf_span_clock_recorder_store(uintptr_t recorder) {
    __atomic_store_n(&perf_span_clock_recorder, recorder, __ATOMIC_RELEASE);
}

#ifdef __cplusplus
}
#endif
#endif

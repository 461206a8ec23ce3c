// C declarations and tiny inline helpers that Swift's Glibc module does not export.
// Everything here is either a declaration of a libc symbol or a static inline function the
// Swift compiler can inline into hot paths (relaxed atomics on raw memory, the monotonic clock).
#ifndef CPERFSHIMS_H
#define CPERFSHIMS_H

#include <stdint.h>
#include <stddef.h>
#include <time.h>
#include "CPerfStackSampler.h"
#include "CPerfRemoteUnwind.h"
#include "CPerfProbes.h"
#include "CPerfFastClock.h"
#include "CPerfReaders.h"
#include "CPerfSampledSpans.h"

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

static inline uint32_t perf_atomic_load_u32_acquire(const uint32_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline int perf_atomic_cas_u32(uint32_t *p, uint32_t expected, uint32_t desired) {
    return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}
static inline void perf_atomic_store_u64_release(uint64_t *p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static inline uint64_t perf_atomic_load_u64_acquire(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline void perf_atomic_store_u32_release(uint32_t *p, uint32_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static inline uint64_t perf_atomic_sub_u64(uint64_t *p, uint64_t v) { return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED); }
/// A full fence: a store before it is seen by any thread before a load after it is made (the
/// ledger queue's commit, then its check for a drainer; the drainer's release, then its re-check).
static inline void perf_atomic_fence_seq_cst(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

/// Takes write access to `p`'s page without changing its value: a compare-and-swap of the word
/// with itself (a locked write cycle even when it fails). Not an atomic add of 0, which compilers
/// turn into a plain load, and which then never takes the page's write fault.
static inline void perf_touch_for_write(uint64_t *p) {
    uint64_t value = __atomic_load_n(p, __ATOMIC_RELAXED);
    (void)__atomic_compare_exchange_n(p, &value, value, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/// glibc's backtrace(3): not exported by Swift's Glibc module.
int backtrace(void **buffer, int size);
/// Reserves the blocks of `[0, length)` of `fd` (Linux fallocate, mode 0): 0 or an errno. Never
/// writes zeros to emulate it, unlike posix_fallocate.
int perf_fallocate(int fd, int64_t length);
/// The kernel thread id of the calling thread.
int32_t perf_gettid(void);
/// Sends a signal to one thread of this process.
int perf_tgkill(int32_t tgid, int32_t tid, int sig);
/// accept4(2) without the peer's address (a GNU extension the Glibc module does not export): the
/// new descriptor, or -1 with errno set.
int perf_accept4(int fd, int flags);
/// pipe2(2) (a GNU extension the Glibc module does not export): 0, or -1 with errno set.
int perf_pipe2(int fds[2], int flags);

// Per-thread histogram stripes (HistogramRegistry). A thread takes a stripe index on its first
// record and keeps it until it exits. Indices below PERF_EXCLUSIVE_STRIPES belong to one living
// thread at a time, so that thread may update its stripe with plain (relaxed) loads and stores;
// threads that find every exclusive index taken share the PERF_SHARED_STRIPES indices above them
// round-robin and must use atomic read-modify-writes there.
#define PERF_EXCLUSIVE_STRIPES 16
#define PERF_SHARED_STRIPES 16

/// This thread's stripe index plus one; 0 until the thread first asks for it.
extern PERF_TLS uint32_t perf_stripe_index_plus_one;
/// Slow path of `perf_thread_stripe`: claims a free exclusive index (acquiring whatever the
/// previous owner wrote) or, when all are taken, a shared one; arranges the release at thread exit.
uint32_t perf_thread_stripe_assign(void);

/// Called once per thread, on that thread, from `perf_thread_stripe_assign` (its first span end
/// or histogram record) after its stripe is set and outside any lock: the thread's kernel id, its
/// kernel name (`comm`, at most 15 bytes) and the label of the dispatch queue it runs (NULL when
/// libdispatch is not linked; libdispatch's default root queue outside any queue). Never on the
/// per-span path, which stays one thread-local load and compare.
typedef void (*perf_thread_hook)(int32_t tid, const char *comm, const char *queue_label);
/// Sets the hook for threads that take their stripe from now on (NULL: none).
void perf_set_thread_hook(perf_thread_hook hook);
/// The calling thread's kernel name (`comm`) into `out`, 16 bytes, NUL-terminated: 0 or an errno.
int perf_current_thread_comm(char *out);

/// The calling thread's stripe index in [0, PERF_EXCLUSIVE_STRIPES + PERF_SHARED_STRIPES).
static inline uint32_t perf_thread_stripe(void) {
    uint32_t plus_one = perf_stripe_index_plus_one;
    if (__builtin_expect(plus_one == 0, 0)) return perf_thread_stripe_assign();
    return plus_one - 1;
}

/// The calling thread's stripe index, or UINT32_MAX before it has one: the span path's test
/// `perf_thread_stripe_or_none() < PERF_EXCLUSIVE_STRIPES` asks "has an exclusive stripe" in one
/// compare, leaving the assignment to the slow path.
static inline uint32_t perf_thread_stripe_or_none(void) { return perf_stripe_index_plus_one - 1; }

/// The calling thread's kernel id, cached per thread (one syscall per thread, ever).
extern PERF_TLS int32_t perf_cached_tid;
static inline int32_t perf_thread_tid(void) {
    int32_t tid = perf_cached_tid;
    if (__builtin_expect(tid == 0, 0)) {
        tid = perf_gettid();
        perf_cached_tid = tid;
    }
    return tid;
}

// The span flight recorder: a fixed ring of the most recent span ends.
//
// A ring of 1,024 slots or more is made of PERF_FLIGHT_MAX_LANES lanes of that many slots each;
// a thread writes only the lane of its histogram stripe index, so two threads ending spans at
// once write slots, and take tickets from a head, of different lanes: the cache lines a thread
// writes were last written by itself, not fetched from another core each lap (perf-bench's
// clock-free two-thread row showed that cost with one shared ring). Each lane keeps its newest
// `capacity` entries, so the ring as a whole still holds the newest `capacity` spans of all
// threads (readers return those); the lanes cost address space, and memory only once written.
//
// Tickets name slots of a lane (ticket & mask). A thread takes tickets in blocks from its lane's
// head (one fetch-add per block) and writes its slot under a sequence number (odd while writing,
// 2 × ticket + 2 when done) plus a check word mixed from every field. Readers copy a slot only
// when its sequence number is even and unchanged across the copy and the check word matches, so
// they never block a writer and never accept a torn entry, even in the rare case of two writers
// in one slot (a writer descheduled for a whole lap of its lane). Readers order entries by end
// time (start + duration), then sequence number. A slot is one cache line.
typedef struct perf_flight_slot {
    uint64_t seq;
    /// The span name's UTF-8 bytes (a StaticString's storage: NUL-terminated and valid for the
    /// process lifetime), or NULL when `name_len` holds a single Unicode scalar with bit 31 set.
    /// Meaningless to any other process: a reader of a crashed process's ring uses `name_ref`.
    const void *name;
    uint32_t name_len;
    /// Where a copy of the name lives in the span memory (a byte offset into its arena), or 0
    /// when the name has none there (a scalar name, or a name the histogram table had no room
    /// for). Lets the next process name the spans of a crashed one.
    uint32_t name_ref;
    uint64_t start_ns;
    uint64_t duration_ns;
    /// UINT64_MAX when the span had no budget.
    uint64_t budget_ns;
    int32_t tid;
    uint32_t exit;
    /// perf_flight_check of the other fields.
    uint64_t check;
} perf_flight_slot;

/// Lanes of a ring of PERF_FLIGHT_MIN_LANE_SLOTS slots or more.
#define PERF_FLIGHT_MAX_LANES 4
/// The smallest capacity that gets lanes: below it a ring is one lane (a test's or a tiny
/// configuration's ring, where a few more slots would be most of its memory).
#define PERF_FLIGHT_MIN_LANE_SLOTS 1024

/// One lane's ticket head, on a cache line of its own.
typedef struct perf_flight_lane {
    /// Tickets handed out from this lane so far.
    uint64_t head;
    char line[56];
} perf_flight_lane;

typedef struct perf_flight_ring {
    perf_flight_lane lanes[PERF_FLIGHT_MAX_LANES];
    /// Slots per lane (the ring's capacity), minus one.
    uint64_t mask;
    /// log2 of the slots per lane.
    uint64_t lane_shift;
    /// Lanes, minus one (0 or PERF_FLIGHT_MAX_LANES - 1).
    uint64_t lane_mask;
    /// Whether `slots` was allocated with the ring (and is freed with it).
    uint64_t owns_slots;
    /// Tickets a thread takes at once: 1 for small rings, up to 64 (one fetch-add per 64 span
    /// ends per thread).
    uint64_t block;
    /// Distinguishes this ring from any other in a thread's cached block.
    uint64_t generation;
    perf_flight_slot *slots;
} perf_flight_ring;

/// How many lanes a ring of `capacity` slots per lane has: PERF_FLIGHT_MAX_LANES from
/// PERF_FLIGHT_MIN_LANE_SLOTS up, else 1.
static inline uint64_t perf_flight_lane_count(uint64_t capacity) {
    return capacity >= PERF_FLIGHT_MIN_LANE_SLOTS ? PERF_FLIGHT_MAX_LANES : 1;
}

/// The slots a ring of `capacity` uses: every lane's.
static inline uint64_t perf_flight_slot_count(uint64_t capacity) {
    return capacity * perf_flight_lane_count(capacity);
}

/// A thread's block of tickets, in one thread-local so the span path finds all of it from one
/// address: [next, end) of lane `lane_index` of ring `generation`, whose slots start at
/// `lane_slots`, checked against the lane's head again once a span starts past `recheck_ns` (1 ms
/// after the last check), written with the thread's `tid` (copied at each claim; a forked child's
/// first span claims anew).
typedef struct perf_flight_block {
    uint64_t next;
    uint64_t end;
    uint64_t generation;
    uint64_t recheck_ns;
    perf_flight_slot *lane_slots;
    uint64_t lane_index;
    int32_t tid;
} perf_flight_block;
extern PERF_TLS perf_flight_block perf_flight_tls;

/// A ring of `capacity` (a power of two ≥ 1; perf_flight_slot_count(capacity) slots), or NULL
/// when memory is short.
perf_flight_ring *perf_flight_ring_create(uint64_t capacity);
/// A ring of `capacity` over perf_flight_slot_count(capacity) zeroed slots the caller owns (a
/// region of a shared file mapping, 64-byte aligned), or NULL when `capacity` is not a power of
/// two or memory is short. Destroying the ring leaves the slots alone.
perf_flight_ring *perf_flight_ring_create_over(perf_flight_slot *slots, uint64_t capacity);
void perf_flight_ring_destroy(perf_flight_ring *ring);
/// Takes a new block of tickets for the calling thread, from the lane of its stripe index, at
/// `now_ns`; returns its first ticket.
uint64_t perf_flight_claim(perf_flight_ring *ring, uint64_t now_ns);
/// The calling thread's next ticket when its block was last checked over 1 ms ago: the same
/// ticket unless other threads took over a quarter of its lane's tickets since, else one from a
/// new block. A span ends in its lane's newest tickets however long its thread was idle, so the
/// lane keeps the spans that ended last, not those of its busiest thread (with a full lap as the
/// bound, a thread idle for a while would write a just-ended span where the next lap overwrites
/// it at once).
uint64_t perf_flight_recheck(perf_flight_ring *ring, uint64_t ticket, uint64_t now_ns);
/// Copies the newest whole entries (at most the ring's capacity), oldest end first, into `out`,
/// which has room for perf_flight_slot_count(capacity); returns how many. `head_out` receives the
/// tickets handed out so far (every lane's).
uint64_t perf_flight_ring_read(const perf_flight_ring *ring, perf_flight_slot *out, uint64_t *head_out);
/// What every reader of a ring returns from its `count` whole slots: orders them by end time
/// (start + duration), then sequence, and keeps the newest `capacity` at the front; returns how
/// many it kept. Each lane holds its own newest `capacity`, so these are the newest of all.
uint64_t perf_flight_keep_newest(perf_flight_slot *slots, uint64_t count, uint64_t capacity);

/// The check word of an entry: each field rotated by its own amount, folded with XOR. A torn
/// mix of two writers' fields matches only if the differences of the mixed fields cancel out
/// exactly, which different sequence numbers, threads and times make practically impossible;
/// unlike a multiply chain it costs a few cycles on the hot path.
static inline uint64_t perf_flight_rotl(uint64_t value, int shift) { return (value << shift) | (value >> (64 - shift)); }
static inline uint64_t perf_flight_check(uint64_t seq, const void *name, uint64_t name_word, uint64_t start_ns,
                                         uint64_t duration_ns, uint64_t budget_ns, int32_t tid, uint32_t exit) {
    return 0x9E3779B97F4A7C15ull ^ seq ^ perf_flight_rotl((uint64_t)(uintptr_t)name, 7) ^
           perf_flight_rotl(name_word, 13) ^ perf_flight_rotl(start_ns, 19) ^ perf_flight_rotl(duration_ns, 29) ^
           perf_flight_rotl(budget_ns, 37) ^ perf_flight_rotl((uint64_t)(uint32_t)tid << 8 | exit, 47);
}

/// The name fields as the one word the check covers.
static inline uint64_t perf_flight_name_word(uint32_t name_len, uint32_t name_ref) {
    return (uint64_t)name_ref << 32 | name_len;
}

/// Records one span end. Lock-free and allocation-free.
static inline void perf_flight_record(perf_flight_ring *ring, const void *name, uint32_t name_len,
                                      uint32_t name_ref, uint64_t start_ns, uint64_t duration_ns, uint64_t budget_ns,
                                      uint32_t exit) {
    perf_flight_block *block = &perf_flight_tls;
    uint64_t ticket = block->next;
    // A block of another ring or used up: take a new one. A block is checked against its
    // lane's head (overtaken by a quarter lap?) at most once a millisecond, not on every span:
    // a lap within the millisecond would take over 1,000 spans.
    if (__builtin_expect(block->generation != ring->generation || ticket >= block->end, 0)) {
        ticket = perf_flight_claim(ring, start_ns);
    } else if (__builtin_expect(start_ns > block->recheck_ns, 0)) {
        ticket = perf_flight_recheck(ring, ticket, start_ns);
    }
    block->next = ticket + 1;
    perf_flight_slot *slot = &block->lane_slots[ticket & ring->mask];
    int32_t tid = block->tid;
    uint64_t seq = 2 * ticket + 2;
    __atomic_store_n(&slot->seq, seq - 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    __atomic_store_n(&slot->name, name, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->name_len, name_len, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->name_ref, name_ref, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->start_ns, start_ns, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->duration_ns, duration_ns, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->budget_ns, budget_ns, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->tid, tid, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->exit, exit, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->check, perf_flight_check(seq, name, perf_flight_name_word(name_len, name_ref), start_ns, duration_ns,
                                                     budget_ns, tid, exit),
                     __ATOMIC_RELAXED);
    __atomic_store_n(&slot->seq, seq, __ATOMIC_RELEASE);
}

/// 1 when this CPU computes CRC-32C in hardware (SSE4.2 on x86_64, the CRC extension on aarch64).
int perf_crc32c_hardware_available(void);

/// Continues a CRC-32C over `count` bytes with the CPU's instruction: the same result as
/// JournalKit's table-driven `CRC32C.update`. Call only when `perf_crc32c_hardware_available()`.
uint32_t perf_crc32c_hardware(uint32_t crc, const void *bytes, size_t count);

#ifdef __cplusplus
}
#endif

#endif

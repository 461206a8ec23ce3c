// Out-of-line wrappers for syscalls that have no glibc wrapper Swift can see.
#define _GNU_SOURCE
#include "CPerfShims.h"
#include <sys/syscall.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>

int32_t perf_gettid(void) { return (int32_t)syscall(SYS_gettid); }

int perf_fallocate(int fd, int64_t length) {
    return fallocate(fd, 0, 0, (off_t)length) == 0 ? 0 : errno;
}

int perf_tgkill(int32_t tgid, int32_t tid, int sig) { return (int)syscall(SYS_tgkill, tgid, tid, sig); }

int perf_accept4(int fd, int flags) { return accept4(fd, NULL, NULL, flags); }

int perf_pipe2(int fds[2], int flags) { return pipe2(fds, flags); }


// Stripe indices for HistogramRegistry (see CPerfShims.h). A bit set in `exclusive_taken` means a
// living thread owns that exclusive index; a thread-exit destructor clears it with release order,
// and the next claimer's acquire makes the old owner's plain stores visible before its own.
#include <pthread.h>
#include <sys/prctl.h>

PERF_TLS uint32_t perf_stripe_index_plus_one;

static uint32_t exclusive_taken;
static uint32_t shared_next;
static pthread_key_t stripe_key;
static pthread_once_t stripe_key_once = PTHREAD_ONCE_INIT;

static uint32_t shared_stripe(void) {
    return PERF_EXCLUSIVE_STRIPES + __atomic_fetch_add(&shared_next, 1, __ATOMIC_RELAXED) % PERF_SHARED_STRIPES;
}

static void release_stripe(void *value) {
    uint32_t index = (uint32_t)(uintptr_t)value - 1;
    // Records made by later thread-exit destructors on this thread go to a shared stripe.
    perf_stripe_index_plus_one = shared_stripe() + 1;
    __atomic_fetch_and(&exclusive_taken, ~(1u << index), __ATOMIC_RELEASE);
}

static void make_stripe_key(void) { (void)pthread_key_create(&stripe_key, release_stripe); }

// libdispatch's (`DISPATCH_CURRENT_QUEUE_LABEL` is NULL), declared here rather than taken from
// <dispatch/dispatch.h>, and weak: a program without libdispatch still links and finds NULL.
extern const char *dispatch_queue_get_label(void *queue) __attribute__((weak));

static perf_thread_hook thread_hook;

void perf_set_thread_hook(perf_thread_hook hook) { __atomic_store_n(&thread_hook, hook, __ATOMIC_RELEASE); }

int perf_current_thread_comm(char *out) {
    memset(out, 0, 16);
    return prctl(PR_GET_NAME, (unsigned long)out, 0, 0, 0) == 0 ? 0 : errno;
}

// Tells the hook about the calling thread once its stripe is set, so that anything recorded
// meanwhile takes the fast path rather than coming back here.
static void announce_thread(void) {
    perf_thread_hook hook = __atomic_load_n(&thread_hook, __ATOMIC_ACQUIRE);
    if (hook == NULL) return;
    char comm[16];
    if (perf_current_thread_comm(comm) != 0) return;
    const char *label = dispatch_queue_get_label != NULL ? dispatch_queue_get_label(NULL) : NULL;
    hook(perf_gettid(), comm, label);
}

static uint32_t claim_stripe(void) {
    _Static_assert(PERF_EXCLUSIVE_STRIPES <= 32, "exclusive stripes are bits of a uint32_t");
    pthread_once(&stripe_key_once, make_stripe_key);
    uint32_t taken = __atomic_load_n(&exclusive_taken, __ATOMIC_RELAXED);
    for (;;) {
        uint32_t free_mask = ~taken & (uint32_t)((1ull << PERF_EXCLUSIVE_STRIPES) - 1);
        if (free_mask == 0) break;
        uint32_t index = (uint32_t)__builtin_ctz(free_mask);
        if (__atomic_compare_exchange_n(&exclusive_taken, &taken, taken | (1u << index), 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED)) {
            // Without a destructor the index would never come back; share instead of leaking it.
            if (pthread_setspecific(stripe_key, (void *)(uintptr_t)(index + 1)) != 0) {
                __atomic_fetch_and(&exclusive_taken, ~(1u << index), __ATOMIC_RELEASE);
                break;
            }
            perf_stripe_index_plus_one = index + 1;
            return index;
        }
    }
    uint32_t index = shared_stripe();
    perf_stripe_index_plus_one = index + 1;
    return index;
}

uint32_t perf_thread_stripe_assign(void) {
    uint32_t index = claim_stripe();
    announce_thread();
    return index;
}

// MARK: - Flight recorder

PERF_TLS int32_t perf_cached_tid = 0;

// A forked child's thread has a new id: the parent's cached one must not follow it, nor the
// copy in its flight recorder block (emptied, so the child's next span claims a block anew).
static void reset_cached_tid(void) {
    perf_cached_tid = 0;
    perf_flight_tls.next = 0;
    perf_flight_tls.end = 0;
}
static pthread_once_t tid_atfork_once = PTHREAD_ONCE_INIT;
static void register_tid_atfork(void) { (void)pthread_atfork(NULL, NULL, reset_cached_tid); }

PERF_TLS perf_flight_block perf_flight_tls;
static uint64_t flight_generations = 0;

// C11's aligned_alloc wants a size that is a multiple of the alignment: glibc tolerates any size,
// AddressSanitizer and ThreadSanitizer abort the host, so round up to whole lines.
static size_t cache_lines(size_t bytes) { return (bytes + 63) & ~(size_t)63; }

perf_flight_ring *perf_flight_ring_create(uint64_t capacity) {
    if (capacity == 0 || (capacity & (capacity - 1)) != 0) return NULL;
    if (capacity > SIZE_MAX / sizeof(perf_flight_slot) / 2 / PERF_FLIGHT_MAX_LANES) return NULL;
    size_t bytes = perf_flight_slot_count(capacity) * sizeof(perf_flight_slot);
    perf_flight_slot *slots = aligned_alloc(64, cache_lines(bytes));
    if (slots == NULL) return NULL;
    memset(slots, 0, bytes);
    perf_flight_ring *ring = perf_flight_ring_create_over(slots, capacity);
    if (ring == NULL) {
        free(slots);
        return NULL;
    }
    ring->owns_slots = 1;
    return ring;
}

perf_flight_ring *perf_flight_ring_create_over(perf_flight_slot *slots, uint64_t capacity) {
    if (slots == NULL || capacity == 0 || (capacity & (capacity - 1)) != 0) return NULL;
    pthread_once(&tid_atfork_once, register_tid_atfork);
    perf_flight_ring *ring = aligned_alloc(64, cache_lines(sizeof(perf_flight_ring)));
    if (ring == NULL) return NULL;
    memset(ring, 0, sizeof(*ring));
    ring->mask = capacity - 1;
    ring->lane_mask = perf_flight_lane_count(capacity) - 1;
    while ((UINT64_C(1) << ring->lane_shift) < capacity) ring->lane_shift++;
    // Blocks hold back at most 1/64 of a lane per thread from readers.
    uint64_t block = capacity / 64;
    ring->block = block < 1 ? 1 : (block > 64 ? 64 : block);
    ring->generation = __atomic_add_fetch(&flight_generations, 1, __ATOMIC_RELAXED);
    ring->slots = slots;
    return ring;
}

void perf_flight_ring_destroy(perf_flight_ring *ring) {
    if (ring == NULL) return;
    if (ring->owns_slots) free(ring->slots);
    free(ring);
}

uint64_t perf_flight_claim(perf_flight_ring *ring, uint64_t now_ns) {
    perf_flight_block *block = &perf_flight_tls;
    block->recheck_ns = now_ns + 1000000;
    block->tid = perf_thread_tid();
    // A thread keeps its stripe index for life, so it keeps its lane.
    uint64_t lane = perf_thread_stripe() & ring->lane_mask;
    block->lane_index = lane;
    block->lane_slots = ring->slots + (lane << ring->lane_shift);
    uint64_t first = __atomic_fetch_add(&ring->lanes[lane].head, ring->block, __ATOMIC_RELAXED);
    block->end = first + ring->block;
    block->generation = ring->generation;
    return first;
}

uint64_t perf_flight_recheck(perf_flight_ring *ring, uint64_t ticket, uint64_t now_ns) {
    perf_flight_block *block = &perf_flight_tls;
    if (ticket + (ring->mask >> 2) < __atomic_load_n(&ring->lanes[block->lane_index].head, __ATOMIC_RELAXED))
        return perf_flight_claim(ring, now_ns);
    block->recheck_ns = now_ns + 1000000;
    return ticket;
}

// By end time, then sequence: lanes number their tickets apart, and a thread's spans end in
// order (the span clock never steps back). A wrapped sum (a corrupt slot) still compares.
static int by_end(const void *a, const void *b) {
    const perf_flight_slot *left = a, *right = b;
    uint64_t left_end = left->start_ns + left->duration_ns, right_end = right->start_ns + right->duration_ns;
    if (left_end != right_end) return left_end < right_end ? -1 : 1;
    return left->seq < right->seq ? -1 : (left->seq > right->seq ? 1 : 0);
}

uint64_t perf_flight_keep_newest(perf_flight_slot *slots, uint64_t count, uint64_t capacity) {
    if (count > 1) qsort(slots, count, sizeof(perf_flight_slot), by_end);
    if (count <= capacity) return count;
    memmove(slots, slots + (count - capacity), capacity * sizeof(perf_flight_slot));
    return capacity;
}

uint64_t perf_flight_ring_read(const perf_flight_ring *ring, perf_flight_slot *out, uint64_t *head_out) {
    uint64_t head = 0;
    for (uint64_t lane = 0; lane <= ring->lane_mask; lane++) head += __atomic_load_n(&ring->lanes[lane].head, __ATOMIC_ACQUIRE);
    uint64_t count = 0;
    uint64_t slots = perf_flight_slot_count(ring->mask + 1);
    // Every slot holds the newest generation written to it: a ticket taken but not (yet) used
    // leaves the slot's previous entry in place, which is still a real span.
    for (uint64_t index = 0; index < slots; index++) {
        const perf_flight_slot *slot = &ring->slots[index];
        uint64_t before = __atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE);
        if (before == 0 || (before & 1) != 0) continue;
        perf_flight_slot copy;
        copy.seq = before;
        copy.name = __atomic_load_n(&slot->name, __ATOMIC_RELAXED);
        copy.name_len = __atomic_load_n(&slot->name_len, __ATOMIC_RELAXED);
        copy.name_ref = __atomic_load_n(&slot->name_ref, __ATOMIC_RELAXED);
        copy.start_ns = __atomic_load_n(&slot->start_ns, __ATOMIC_RELAXED);
        copy.duration_ns = __atomic_load_n(&slot->duration_ns, __ATOMIC_RELAXED);
        copy.budget_ns = __atomic_load_n(&slot->budget_ns, __ATOMIC_RELAXED);
        copy.tid = __atomic_load_n(&slot->tid, __ATOMIC_RELAXED);
        copy.exit = __atomic_load_n(&slot->exit, __ATOMIC_RELAXED);
        copy.check = __atomic_load_n(&slot->check, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&slot->seq, __ATOMIC_RELAXED) != before) continue;
        if (copy.check != perf_flight_check(before, copy.name, perf_flight_name_word(copy.name_len, copy.name_ref),
                                            copy.start_ns, copy.duration_ns,
                                            copy.budget_ns, copy.tid, copy.exit))
            continue;
        out[count++] = copy;
    }
    *head_out = head;
    return perf_flight_keep_newest(out, count, ring->mask + 1);
}

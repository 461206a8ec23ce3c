// Out-of-line wrappers for syscalls that have no glibc wrapper Swift can see.
#define _GNU_SOURCE
#include "CPerfShims.h"
#include <sys/syscall.h>
#include <unistd.h>

int32_t perf_gettid(void) { return (int32_t)syscall(SYS_gettid); }

int perf_tgkill(int32_t tgid, int32_t tid, int sig) { return (int)syscall(SYS_tgkill, tgid, tid, sig); }


// Stripe indices for HistogramRegistry (see CPerfShims.h). A bit set in `exclusive_taken` means a
// living thread owns that exclusive index; a thread-exit destructor clears it with release order,
// and the next claimer's acquire makes the old owner's plain stores visible before its own.
#include <pthread.h>

__thread uint32_t perf_stripe_index_plus_one;

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

uint32_t perf_thread_stripe_assign(void) {
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

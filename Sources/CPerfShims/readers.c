// The reader registry and the grace-period wait behind CPerfReaders.h.
#define _GNU_SOURCE
#include "CPerfReaders.h"
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

PERF_TLS perf_reader perf_tls_reader;
PERF_TLS uint64_t perf_tls_scope;
uint64_t perf_async_scopes;
uintptr_t perf_span_clock_recorder;

static pthread_mutex_t readers_lock = PTHREAD_MUTEX_INITIALIZER;
static perf_reader readers_head = {0, &readers_head, &readers_head, 1};
static pthread_key_t readers_key;
static pthread_once_t readers_once = PTHREAD_ONCE_INIT;
/// 1: private expedited membarrier registered; 2: only the global one; -1: none.
static int barrier_kind = 0;

static void unlink_reader(perf_reader *reader) {
    reader->prev->next = reader->next;
    reader->next->prev = reader->prev;
    reader->next = reader->prev = reader;
}

/// At thread exit: the thread's word goes with its TLS, so it leaves the registry first.
static void reader_thread_exit(void *value) {
    perf_reader *reader = value;
    pthread_mutex_lock(&readers_lock);
    unlink_reader(reader);
    reader->registered = 0;
    pthread_mutex_unlock(&readers_lock);
}

/// A forked child has one thread: the others' words are copies that will never change.
static void readers_after_fork_child(void) {
    pthread_mutex_init(&readers_lock, NULL);
    readers_head.next = readers_head.prev = &readers_head;
    perf_reader *self = &perf_tls_reader;
    if (self->registered) {
        self->next = readers_head.next;
        self->prev = &readers_head;
        readers_head.next->prev = self;
        readers_head.next = self;
    }
}

static void readers_before_fork(void) { pthread_mutex_lock(&readers_lock); }
static void readers_after_fork_parent(void) { pthread_mutex_unlock(&readers_lock); }

static void readers_init(void) {
    (void)pthread_key_create(&readers_key, reader_thread_exit);
    (void)pthread_atfork(readers_before_fork, readers_after_fork_parent, readers_after_fork_child);
}

void perf_reader_register(void) {
    pthread_once(&readers_once, readers_init);
    perf_reader *reader = &perf_tls_reader;
    pthread_mutex_lock(&readers_lock);
    reader->next = readers_head.next;
    reader->prev = &readers_head;
    readers_head.next->prev = reader;
    readers_head.next = reader;
    reader->registered = 1;
    pthread_mutex_unlock(&readers_lock);
    (void)pthread_setspecific(readers_key, reader);
}

static int full_barrier_everywhere(void) {
    if (barrier_kind == 0) {
        if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0) {
            barrier_kind = 1;
        } else {
            long query = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
            barrier_kind = query > 0 && (query & MEMBARRIER_CMD_GLOBAL) ? 2 : -1;
        }
    }
    switch (barrier_kind) {
    case 1: return syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0 ? 0 : -1;
    case 2: return syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0 ? 0 : -1;
    default: return -1;
    }
}

int perf_reader_synchronize(void) {
    // Called from inside a section (a shutdown from code a span's end ran): this thread may still
    // be using what was loaded, and it cannot wait for itself.
    if ((uint32_t)perf_tls_reader.state != 0) return 1;
    pthread_once(&readers_once, readers_init);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    pthread_mutex_lock(&readers_lock);
    if (full_barrier_everywhere() != 0) {
        pthread_mutex_unlock(&readers_lock);
        return -1;
    }
    perf_reader *self = &perf_tls_reader;
    for (perf_reader *reader = readers_head.next; reader != &readers_head; reader = reader->next) {
        if (reader == self) continue;
        uint64_t seen = __atomic_load_n(&reader->state, __ATOMIC_ACQUIRE);
        if ((uint32_t)seen == 0) continue;
        // Inside a section: wait until it leaves (depth 0) or has entered a new outermost one.
        for (unsigned spins = 0;; spins++) {
            uint64_t now = __atomic_load_n(&reader->state, __ATOMIC_ACQUIRE);
            if ((uint32_t)now == 0 || (now >> 32) != (seen >> 32)) break;
            if (spins < 1000) {
                sched_yield();
            } else {
                struct timespec pause = {0, 100000};  // a descheduled reader: back off to 0.1 ms
                nanosleep(&pause, NULL);
            }
        }
    }
    pthread_mutex_unlock(&readers_lock);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return 0;
}

// The registry of per-thread sampled-span stacks behind CPerfSampledSpans.h.
#define _GNU_SOURCE
#include "CPerfSampledSpans.h"
#include "CPerfShims.h"
#include <pthread.h>
#include <string.h>

uint32_t perf_sampling_enabled;
PERF_TLS perf_sampled_thread perf_tls_sampled;

static pthread_mutex_t sampled_lock = PTHREAD_MUTEX_INITIALIZER;
static perf_sampled_thread sampled_head = {0, 0, 0, {{0, 0, 0, 0, 0}}, &sampled_head, &sampled_head, 1};
static pthread_key_t sampled_key;
static pthread_once_t sampled_once = PTHREAD_ONCE_INIT;

static void unlink_sampled(perf_sampled_thread *thread) {
    thread->prev->next = thread->next;
    thread->next->prev = thread->prev;
    thread->next = thread->prev = thread;
}

/// At thread exit: the stack goes with the thread's TLS, so it leaves the registry first.
static void sampled_thread_exit(void *value) {
    perf_sampled_thread *thread = value;
    pthread_mutex_lock(&sampled_lock);
    unlink_sampled(thread);
    thread->registered = 0;
    pthread_mutex_unlock(&sampled_lock);
}

/// A forked child has one thread: the others' stacks will never change again.
static void sampled_after_fork_child(void) {
    pthread_mutex_init(&sampled_lock, NULL);
    sampled_head.next = sampled_head.prev = &sampled_head;
    perf_sampled_thread *self = &perf_tls_sampled;
    if (self->registered) {
        self->tid = perf_gettid();
        self->next = sampled_head.next;
        self->prev = &sampled_head;
        sampled_head.next->prev = self;
        sampled_head.next = self;
    }
}

static void sampled_before_fork(void) { pthread_mutex_lock(&sampled_lock); }
static void sampled_after_fork_parent(void) { pthread_mutex_unlock(&sampled_lock); }

static void sampled_init(void) {
    (void)pthread_key_create(&sampled_key, sampled_thread_exit);
    (void)pthread_atfork(sampled_before_fork, sampled_after_fork_parent, sampled_after_fork_child);
}

void perf_sampled_register(void) {
    pthread_once(&sampled_once, sampled_init);
    perf_sampled_thread *self = &perf_tls_sampled;
    self->tid = perf_gettid();
    pthread_mutex_lock(&sampled_lock);
    self->next = sampled_head.next;
    self->prev = &sampled_head;
    sampled_head.next->prev = self;
    sampled_head.next = self;
    self->registered = 1;
    pthread_mutex_unlock(&sampled_lock);
    (void)pthread_setspecific(sampled_key, self);
}

/// One consistent copy of `thread`'s stack, or 0 after a few tries found it changing.
static int read_stack(perf_sampled_thread *thread, perf_sampled_view *view) {
    for (int attempt = 0; attempt < 4; attempt++) {
        uint64_t before = __atomic_load_n(&thread->sequence, __ATOMIC_ACQUIRE);
        if (before & 1) continue;
        uint32_t depth = __atomic_load_n(&thread->depth, __ATOMIC_RELAXED);
        uint32_t kept = depth < PERF_SAMPLED_DEPTH ? depth : PERF_SAMPLED_DEPTH;
        for (uint32_t i = 0; i < kept; i++) {
            perf_sampled_entry *entry = &thread->entries[i];
            view->entries[i].start_ns = __atomic_load_n(&entry->start_ns, __ATOMIC_RELAXED);
            view->entries[i].threshold_ns = __atomic_load_n(&entry->threshold_ns, __ATOMIC_RELAXED);
            view->entries[i].name_word = __atomic_load_n(&entry->name_word, __ATOMIC_RELAXED);
            view->entries[i].profile = __atomic_load_n(&entry->profile, __ATOMIC_RELAXED);
            view->entries[i].span_id = __atomic_load_n(&entry->span_id, __ATOMIC_RELAXED);
        }
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&thread->sequence, __ATOMIC_RELAXED) != before) continue;
        view->thread = thread;
        view->tid = thread->tid;
        view->depth = depth;
        return 1;
    }
    return 0;
}

int perf_sampled_snapshot(perf_sampled_view *out, int capacity) {
    pthread_once(&sampled_once, sampled_init);
    int count = 0;
    pthread_mutex_lock(&sampled_lock);
    for (perf_sampled_thread *thread = sampled_head.next; thread != &sampled_head && count < capacity;
         thread = thread->next) {
        if (__atomic_load_n(&thread->depth, __ATOMIC_RELAXED) == 0) continue;
        if (read_stack(thread, &out[count]) && out[count].depth > 0) count++;
    }
    pthread_mutex_unlock(&sampled_lock);
    return count;
}

int perf_sampled_attach(perf_sampled_thread *thread, uint32_t index, uint64_t start_ns, uint64_t profile) {
    if (index >= PERF_SAMPLED_DEPTH) return 0;
    int attached = 0;
    // Under the registry lock, and only if still registered: a thread that exited since the
    // snapshot took its stack with it (the pointer may even be another thread's by now, which
    // the start check then refuses).
    pthread_mutex_lock(&sampled_lock);
    int linked = 0;
    for (perf_sampled_thread *other = sampled_head.next; other != &sampled_head; other = other->next) {
        if (other == thread) {
            linked = 1;
            break;
        }
    }
    if (linked) {
        perf_sampled_entry *entry = &thread->entries[index];
        __atomic_store_n(&entry->profile, profile, __ATOMIC_RELEASE);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        if (__atomic_load_n(&entry->start_ns, __ATOMIC_RELAXED) == start_ns &&
            __atomic_load_n(&thread->depth, __ATOMIC_RELAXED) > index) {
            attached = 1;
        } else {
            uint64_t expected = profile;
            __atomic_compare_exchange_n(&entry->profile, &expected, 0, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
        }
    }
    pthread_mutex_unlock(&sampled_lock);
    return attached;
}

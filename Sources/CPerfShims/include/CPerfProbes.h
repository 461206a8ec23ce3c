// USDT probes (provider `perf`): Linux's native signposts, written from the SystemTap SDT note
// format (version 3), so nothing outside the toolchain is needed to build them.
//
// A probe site is one `nop` plus an ELF note in `.note.stapsdt` that names the provider, the probe,
// the nop's address, the probe's semaphore and where each argument lives (`8@%rdi`). A tracer
// (perf probe, bpftrace, gdb, SystemTap) reads the note, increments the semaphore in the target
// and turns the nop into a uprobe. Every probe here is guarded by its semaphore: with no tracer
// attached a site costs one load and a branch that is not taken; the arguments are set up only
// on the taken side.
//
// The functions are `static inline` so that they inline into their Swift callers: the note's
// address is then the nop inside the caller, in whatever binary links Perf (statically: the
// program's executable). Arguments never carry content: static names, durations, budgets, exits,
// a watched target's name and a hang's culprit symbol, as the ledger keeps them.
//
// Probes and their arguments (all 8-byte registers):
//   span_end      name (char *), duration ns, budget ns (0: none), exit, over budget (0/1)
//   span_begin    name (char *), budget ns (0: none)            (keyed and bounded spans only)
//   hang, hitch   target name (char *), lower ms, upper ms, culprit (char *, "" when unknown)
//   note          name (char *)
//   session_start pid
//   session_end   pid
//
// Compiled out (every function a no-op, semaphores still defined) with -DPERF_NO_PROBES, and on
// architectures other than x86_64 and aarch64.
#ifndef CPERFPROBES_H
#define CPERFPROBES_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if (defined(__x86_64__) || defined(__aarch64__)) && !defined(PERF_NO_PROBES)
#define PERF_PROBES_COMPILED 1
#else
#define PERF_PROBES_COMPILED 0
#endif

// Semaphores (is-enabled counters): `<provider>_<probe>_semaphore` in section `.probes`, where
// tracers look for them. A tracer adds one while it listens. Defined in probes.c.
#define PERF_PROBE_SEMAPHORE(probe) \
    extern volatile unsigned short perf_##probe##_semaphore __attribute__((visibility("hidden")))
PERF_PROBE_SEMAPHORE(span_end);
PERF_PROBE_SEMAPHORE(span_begin);
PERF_PROBE_SEMAPHORE(hang);
PERF_PROBE_SEMAPHORE(hitch);
PERF_PROBE_SEMAPHORE(note);
PERF_PROBE_SEMAPHORE(session_start);
PERF_PROBE_SEMAPHORE(session_end);
#undef PERF_PROBE_SEMAPHORE

#if PERF_PROBES_COMPILED

#define PERF_PROBE_STR_(x) #x
#define PERF_PROBE_STR(x) PERF_PROBE_STR_(x)

// The note: namesz, descsz, type 3, "stapsdt", then pc, the base marker's address, the semaphore's
// address, and provider NUL name NUL arguments NUL. `.stapsdt.base` (one byte, once per object)
// lets a tracer correct the addresses for prelinking; it is marked retained ("R", SHF_GNU_RETAIN)
// because only the non-allocated note refers to it and a release link's --gc-sections dropped
// it, after which gdb ignored every probe. The "?" flag puts the note in the group of
// the function holding the nop, so the linker drops the note with a discarded copy of it.
#define PERF_PROBE_ASM(probe, args)                                                           \
    "990: nop\n"                                                                              \
    ".pushsection .note.stapsdt,\"?\",\"note\"\n"                                             \
    ".balign 4\n"                                                                             \
    ".4byte 992f-991f, 994f-993f, 3\n"                                                        \
    "991: .asciz \"stapsdt\"\n"                                                               \
    "992: .balign 4\n"                                                                        \
    "993: .8byte 990b\n"                                                                      \
    ".8byte _.stapsdt.base\n"                                                                 \
    ".8byte perf_" #probe "_semaphore\n"                                                      \
    ".asciz \"perf\"\n"                                                                       \
    ".asciz \"" #probe "\"\n"                                                                 \
    ".asciz \"" args "\"\n"                                                                   \
    "994: .balign 4\n"                                                                        \
    ".popsection\n"                                                                           \
    ".ifndef _.stapsdt.base\n"                                                                \
    ".pushsection .stapsdt.base,\"aGR\",\"progbits\",.stapsdt.base,comdat\n"                  \
    ".weak _.stapsdt.base\n"                                                                  \
    ".hidden _.stapsdt.base\n"                                                                \
    "_.stapsdt.base: .space 1\n"                                                              \
    ".size _.stapsdt.base, 1\n"                                                               \
    ".popsection\n"                                                                           \
    ".endif\n"

// Arguments go in registers ("r"): perf probe skips immediate SDT arguments, and a memory
// alternative made clang spill to the stack. The set-up sits behind the semaphore, so forcing
// registers costs nothing when nobody listens.
#define PERF_PROBE_ARG(n) "8@%[a" #n "]"

#endif

/// True while a tracer listens to `span_end`: one load; the branch is predicted not taken.
static inline int perf_probe_span_end_enabled(void) { return __builtin_expect(perf_span_end_semaphore != 0, 0); }
static inline int perf_probe_span_begin_enabled(void) { return __builtin_expect(perf_span_begin_semaphore != 0, 0); }
static inline int perf_probe_hang_enabled(void) { return __builtin_expect(perf_hang_semaphore != 0, 0); }
static inline int perf_probe_hitch_enabled(void) { return __builtin_expect(perf_hitch_semaphore != 0, 0); }
static inline int perf_probe_note_enabled(void) { return __builtin_expect(perf_note_semaphore != 0, 0); }
static inline int perf_probe_session_start_enabled(void) {
    return __builtin_expect(perf_session_start_semaphore != 0, 0);
}
static inline int perf_probe_session_end_enabled(void) { return __builtin_expect(perf_session_end_semaphore != 0, 0); }

/// The probe sites. Callers check the matching `_enabled` first; the site itself does not, so a
/// caller that has the check hoisted pays for it once.
static inline void perf_probe_span_end(const char *name, uint64_t duration_ns, uint64_t budget_ns, uint64_t exit,
                                       uint64_t over_budget) {
#if PERF_PROBES_COMPILED
    __asm__ __volatile__(PERF_PROBE_ASM(span_end, PERF_PROBE_ARG(1) " " PERF_PROBE_ARG(2) " " PERF_PROBE_ARG(
                             3) " " PERF_PROBE_ARG(4) " " PERF_PROBE_ARG(5))
                         :
                         : [a1] "r"(name), [a2] "r"(duration_ns), [a3] "r"(budget_ns), [a4] "r"(exit),
                           [a5] "r"(over_budget));
#else
    (void)name; (void)duration_ns; (void)budget_ns; (void)exit; (void)over_budget;
#endif
}

static inline void perf_probe_span_begin(const char *name, uint64_t budget_ns) {
#if PERF_PROBES_COMPILED
    __asm__ __volatile__(PERF_PROBE_ASM(span_begin, PERF_PROBE_ARG(1) " " PERF_PROBE_ARG(2))
                         :
                         : [a1] "r"(name), [a2] "r"(budget_ns));
#else
    (void)name; (void)budget_ns;
#endif
}

static inline void perf_probe_hang(const char *target, uint64_t lower_ms, uint64_t upper_ms, const char *culprit) {
#if PERF_PROBES_COMPILED
    __asm__ __volatile__(
        PERF_PROBE_ASM(hang, PERF_PROBE_ARG(1) " " PERF_PROBE_ARG(2) " " PERF_PROBE_ARG(3) " " PERF_PROBE_ARG(4))
        :
        : [a1] "r"(target), [a2] "r"(lower_ms), [a3] "r"(upper_ms), [a4] "r"(culprit));
#else
    (void)target; (void)lower_ms; (void)upper_ms; (void)culprit;
#endif
}

static inline void perf_probe_hitch(const char *target, uint64_t lower_ms, uint64_t upper_ms, const char *culprit) {
#if PERF_PROBES_COMPILED
    __asm__ __volatile__(
        PERF_PROBE_ASM(hitch, PERF_PROBE_ARG(1) " " PERF_PROBE_ARG(2) " " PERF_PROBE_ARG(3) " " PERF_PROBE_ARG(4))
        :
        : [a1] "r"(target), [a2] "r"(lower_ms), [a3] "r"(upper_ms), [a4] "r"(culprit));
#else
    (void)target; (void)lower_ms; (void)upper_ms; (void)culprit;
#endif
}

static inline void perf_probe_note(const char *name) {
#if PERF_PROBES_COMPILED
    __asm__ __volatile__(PERF_PROBE_ASM(note, PERF_PROBE_ARG(1)) : : [a1] "r"(name));
#else
    (void)name;
#endif
}

static inline void perf_probe_session_start(uint64_t pid) {
#if PERF_PROBES_COMPILED
    __asm__ __volatile__(PERF_PROBE_ASM(session_start, PERF_PROBE_ARG(1)) : : [a1] "r"(pid));
#else
    (void)pid;
#endif
}

static inline void perf_probe_session_end(uint64_t pid) {
#if PERF_PROBES_COMPILED
    __asm__ __volatile__(PERF_PROBE_ASM(session_end, PERF_PROBE_ARG(1)) : : [a1] "r"(pid));
#else
    (void)pid;
#endif
}

/// Whether the probes were compiled in (0 with -DPERF_NO_PROBES or on other architectures).
static inline int perf_probes_compiled(void) { return PERF_PROBES_COMPILED; }

#ifdef __cplusplus
}
#endif

#endif

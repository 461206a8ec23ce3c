// Stack unwinding of another thread of this process that is blocked in a system call, without
// signalling it: its registers at the call come from /proc/self/task/<tid>/syscall, its stack is
// copied with process_vm_readv, and the copy is unwound with the loaded images' DWARF CFI
// (.eh_frame). Nothing here runs on a hot path or in a signal handler.
#ifndef CPERFREMOTEUNWIND_H
#define CPERFREMOTEUNWIND_H

#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What /proc/self/task/<tid>/syscall says about a thread.
enum { PERF_THREAD_GONE = 0, PERF_THREAD_BLOCKED = 1, PERF_THREAD_USER = 2, PERF_THREAD_RUNNING = 3 };

typedef struct {
    /// One of the above. BLOCKED: "nr a1..a6 sp pc" with nr >= 0 (in a system call). USER:
    /// "-1 sp pc" (off the CPU outside a system call: a page fault, stopped). RUNNING: "running"
    /// (on a CPU or runnable). GONE: the file is unreadable (the thread exited).
    int32_t state;
    /// The system call number (BLOCKED only), else -1.
    int64_t nr;
    /// Its arguments (BLOCKED only), else 0.
    uint64_t args[6];
    /// User stack pointer and program counter (BLOCKED and USER), else 0. At a system call the
    /// pc is the instruction after it.
    uint64_t sp, pc;
} perf_thread_syscall;

/// Parses /proc/self/task/<tid>/syscall (open/read/close; no stdio, no malloc). Returns 0 when
/// read, -1 when the thread is gone or the file unreadable (then `out->state` is GONE).
int perf_thread_read_syscall(int32_t tid, perf_thread_syscall *out);

/// Copies `length` bytes of this process's memory at `address` into `buffer` without risk of
/// SIGSEGV: process_vm_readv on our own pid, falling back to pread on /proc/self/mem when that
/// is not permitted. Returns the number of bytes copied (0 when unreadable; fewer than `length`
/// when the range runs into unmapped memory).
size_t perf_read_memory(uintptr_t address, void *buffer, size_t length);

/// Unwinds thread `tid` of this process, which must be blocked in a system call, without
/// signalling it. frames[0] is the pc at the system call; later entries are return addresses
/// (innermost first): look up `address - 1` to name them. `syscall_out` (may be NULL) receives
/// the syscall line read before the unwind.
/// Returns the number of frames (1 ... capacity), or: -1 the thread is not blocked in a system
/// call (see `syscall_out->state`; the calling thread itself counts as RUNNING), -2 the thread moved while its stack was copied (the syscall
/// line differs before and after), -3 unsupported architecture (x86_64 only), -4 the stack
/// memory could not be read (or `capacity` < 1, or out of memory).
/// Thread-safe. Takes the dynamic loader's lock (dl_iterate_phdr) for the duration of the walk,
/// so that no image can be unloaded while its unwind tables are read.
int perf_remote_unwind(int32_t tid, uintptr_t *frames, int capacity, perf_thread_syscall *syscall_out);

#ifdef __cplusplus
}
#endif

#endif

// Stack sampling of another thread (SIGPROF + backtrace into preallocated slots) and
// symbolication from ELF symbol tables, for the hang watchdog. Nothing here runs on a hot path.
#ifndef CPERFSTACKSAMPLER_H
#define CPERFSTACKSAMPLER_H

#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Most frames one sample keeps.
#define PERF_STACK_MAX_FRAMES 128

/// Installs the SIGPROF handler once per process and primes backtrace() (its first call loads
/// libgcc_s and allocates, which must not happen inside the handler).
/// Returns 0 when installed, 1 when SIGPROF already has a handler that is not ours (a profiler
/// is attached: we do not steal it), -1 when sigaction failed.
int perf_stack_sampler_install(void);

/// Samples the stack of thread `tid` of this process: sends it SIGPROF and waits up to
/// `timeout_ns` for its handler to fill a preallocated slot. Frames start at the interrupted
/// instruction. Returns the number of frames written to `frames` (at most `capacity`), -1 when
/// the sampler is not installed, -2 when no slot is free, -3 when the signal could not be sent
/// (the thread exited), -4 on timeout (the thread blocks SIGPROF or is not scheduled).
int perf_stack_sample_thread(int32_t tid, uintptr_t *frames, int capacity, uint64_t timeout_ns);

/// Keeps the frames of a stack unwound inside the SIGPROF handler from the interrupted
/// instruction `pc` on (moved to the front); when `pc` is not among them, only `pc` itself, so
/// the handler's and the signal delivery's frames are never reported. Returns the new count.
int perf_trim_signal_frames(void **frames, int count, uintptr_t pc);

/// Names the function containing `address`: the image it belongs to (path) and the raw
/// (mangled) symbol from the image's `.symtab`, else `.dynsym`. Returns 1 when a symbol was
/// found, 0 when only the image is known, -1 when the address is in no loaded image.
/// Strings are NUL-terminated and truncated to their capacities.
int perf_symbolicate(uintptr_t address, char *symbol, size_t symbol_capacity, char *image,
                     size_t image_capacity, uintptr_t *symbol_offset);

/// Names the calling thread (at most 15 bytes are kept), so `/proc` and debuggers show it.
void perf_name_current_thread(const char *name);

/// Swift's runtime demangler (exported by libswiftCore). Returns a malloc'd string when
/// `output_buffer` is NULL; the caller frees it.
char *swift_demangle(const char *mangled_name, size_t mangled_name_length, char *output_buffer,
                     size_t *output_buffer_size, uint32_t flags);

#ifdef __cplusplus
}
#endif

#endif

// Internal to the remote unwinder (remote_unwind.c and remote_unwind_{images,dwarf,step}.c), not
// part of the module: the types they share and the functions one file calls in another. x86_64
// only, like the unwind itself.
#ifndef PERF_REMOTE_UNWIND_INTERNAL_H
#define PERF_REMOTE_UNWIND_INTERNAL_H

#include "CPerfRemoteUnwind.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__)
#include <elf.h>
#include <link.h>

// MARK: - Loaded images and registers

#define PERF_UNWIND_MAX_IMAGES 512
#define PERF_UNWIND_MAX_SEGMENTS 2048

typedef struct {
    uintptr_t start, end;
    uint32_t flags;  // PF_R, PF_X
    uint32_t image;
} perf_unwind_segment;

typedef struct {
    uintptr_t eh_frame_hdr;  // 0 when the image has none
    uintptr_t eh_frame_hdr_size;
    uint32_t first_segment, segment_count;
} perf_unwind_image;

#define PERF_REG_RBP 6
#define PERF_REG_RSP 7
#define PERF_REG_RIP 16
#define PERF_COLUMNS 17  // DWARF x86_64: rax rdx rcx rbx rsi rdi rbp rsp r8-r15, 16 = return address

// Register values of one frame; bit i of `known` says whether value[i] is known.
typedef struct {
    uint64_t value[PERF_COLUMNS];
    uint32_t known;
} perf_regs;

typedef struct {
    // The copy of the stack: [stack_low, stack_high) of the thread is at `stack`.
    const uint8_t *stack;
    uintptr_t stack_low, stack_high;
    perf_unwind_image images[PERF_UNWIND_MAX_IMAGES];
    perf_unwind_segment segments[PERF_UNWIND_MAX_SEGMENTS];
    uint16_t code[PERF_UNWIND_MAX_SEGMENTS];  // the executable segments, sorted by address
    uint32_t image_count, segment_count, code_count;
} perf_unwind_context;

// MARK: - DWARF readers

// A bounds-checked reader of unwind tables in image memory: [at, end). A read past the end
// clears `ok` and returns 0; callers check `ok` once after a group of reads.
typedef struct {
    uintptr_t at, end;
    bool ok;
} perf_cursor;

// MARK: - CIE and FDE

typedef struct {
    uint64_t code_align;
    int64_t data_align;
    uint64_t return_register;
    uint8_t fde_encoding;
    bool signal_frame;  // "S": the caller's pc is an interrupted instruction, not a return address
    bool has_augmentation_data;
    uintptr_t instructions, instructions_end;
} perf_cie;

typedef struct {
    perf_cie cie;
    uintptr_t pc_begin, pc_end;
    uintptr_t instructions, instructions_end;
} perf_fde;

// MARK: - Stepping

// What perf_step returns.
enum { STEP_STUCK = -1, STEP_OUTERMOST = 0, STEP_CALLER = 1 };

// MARK: - Functions one file calls in another

// remote_unwind_images.c
/// Shared between the unwinder's files only: not exported from the library.
#define PERF_INTERNAL __attribute__((visibility("hidden")))

PERF_INTERNAL int perf_collect_image(struct dl_phdr_info *info, size_t size, void *data);
PERF_INTERNAL void perf_index_code(perf_unwind_context *context);
const perf_unwind_segment *perf_code_segment(const perf_unwind_context *context, uintptr_t address);
PERF_INTERNAL uintptr_t perf_readable_end(const perf_unwind_context *context, uint32_t image, uintptr_t address);
PERF_INTERNAL bool perf_stack_word(const perf_unwind_context *context, uintptr_t address, uint64_t *out);
PERF_INTERNAL bool perf_scan_return_address(const perf_unwind_context *context, uintptr_t sp, uintptr_t pc, uintptr_t nearest,
                              uintptr_t *slot_out);
PERF_INTERNAL bool perf_scan_frame_record(const perf_unwind_context *context, uintptr_t sp, uintptr_t function,
                            uint64_t *rbp_out);

// remote_unwind_dwarf.c
PERF_INTERNAL uint64_t perf_read_bytes(perf_cursor *cursor, size_t count);
PERF_INTERNAL uint8_t perf_read_u8(perf_cursor *cursor);
PERF_INTERNAL uint64_t perf_read_uleb(perf_cursor *cursor);
PERF_INTERNAL int64_t perf_read_sleb(perf_cursor *cursor);
PERF_INTERNAL uintptr_t perf_read_block(perf_cursor *cursor, uint64_t *length_out);
PERF_INTERNAL uintptr_t perf_read_encoded(perf_cursor *cursor, uint8_t encoding, uintptr_t data_base, uintptr_t function_base);
PERF_INTERNAL bool perf_find_fde(const perf_unwind_context *context, uint32_t index, uintptr_t pc, perf_fde *fde,
                   uintptr_t *nearest);

// remote_unwind_step.c
PERF_INTERNAL int perf_step(const perf_unwind_context *context, perf_regs *regs, bool exact, bool *signal_frame);

#endif  // __x86_64__

#endif

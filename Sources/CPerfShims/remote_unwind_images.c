// Remote unwind, part 2 of 4: the loaded images and what the stack says about them. Collects
// every image's segments and .eh_frame_hdr (dl_iterate_phdr), finds the code segment of an
// address, checks for a call instruction before a return address, and scans the stack copy
// for return addresses and frame records when CFI alone cannot find a frame.
#define _GNU_SOURCE
#include "remote_unwind_internal.h"

#include <stdbool.h>
#include <string.h>

#if defined(__x86_64__)

// MARK: - Loaded images

// dl_iterate_phdr callback: records each image's PT_LOAD segments and its .eh_frame_hdr.
int perf_collect_image(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    perf_unwind_context *context = data;
    if (context->image_count == PERF_UNWIND_MAX_IMAGES) return 1;
    perf_unwind_image *image = &context->images[context->image_count];
    memset(image, 0, sizeof *image);
    image->first_segment = context->segment_count;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *header = &info->dlpi_phdr[i];
        if (header->p_type == PT_GNU_EH_FRAME) {
            image->eh_frame_hdr = info->dlpi_addr + header->p_vaddr;
            image->eh_frame_hdr_size = header->p_memsz;
        } else if (header->p_type == PT_LOAD && context->segment_count < PERF_UNWIND_MAX_SEGMENTS &&
                   header->p_memsz > 0) {
            perf_unwind_segment *segment = &context->segments[context->segment_count++];
            segment->start = info->dlpi_addr + header->p_vaddr;
            segment->end = segment->start + header->p_memsz;
            segment->flags = header->p_flags;
            segment->image = context->image_count;
            image->segment_count++;
        }
    }
    if (image->segment_count > 0) context->image_count++;
    return 0;
}

// Sorts the executable segments by address into `code` (insertion sort: there are tens).
void perf_index_code(perf_unwind_context *context) {
    context->code_count = 0;
    for (uint32_t i = 0; i < context->segment_count; i++) {
        if (!(context->segments[i].flags & PF_X)) continue;
        uint32_t at = context->code_count++;
        while (at > 0 && context->segments[context->code[at - 1]].start > context->segments[i].start) {
            context->code[at] = context->code[at - 1];
            at--;
        }
        context->code[at] = (uint16_t)i;
    }
}

// The executable segment containing `address`, or NULL.
const perf_unwind_segment *perf_code_segment(const perf_unwind_context *context, uintptr_t address) {
    uint32_t low = 0, high = context->code_count;  // the last segment starting at or below
    while (low < high) {
        uint32_t middle = low + (high - low) / 2;
        if (context->segments[context->code[middle]].start <= address) low = middle + 1;
        else high = middle;
    }
    if (low == 0) return NULL;
    const perf_unwind_segment *segment = &context->segments[context->code[low - 1]];
    return address < segment->end ? segment : NULL;
}

// The end of the readable segment of `image` containing `address`, or 0: the limit of any read
// of unwind tables from there.
uintptr_t perf_readable_end(const perf_unwind_context *context, uint32_t image, uintptr_t address) {
    const perf_unwind_image *entry = &context->images[image];
    for (uint32_t i = entry->first_segment; i < entry->first_segment + entry->segment_count; i++) {
        const perf_unwind_segment *segment = &context->segments[i];
        if (address >= segment->start && address < segment->end && (segment->flags & PF_R)) return segment->end;
    }
    return 0;
}

// MARK: - Stack reads

// Reads the 8-byte word at `address`: from the copy when it is there, else from live memory.
bool perf_stack_word(const perf_unwind_context *context, uintptr_t address, uint64_t *out) {
    if (address >= context->stack_low && address <= context->stack_high - 8 && address + 8 > address) {
        memcpy(out, context->stack + (address - context->stack_low), 8);
        return true;
    }
    return perf_read_memory(address, out, 8) == 8;
}

// What precedes a candidate return address.
enum { CALL_NONE = 0, CALL_INDIRECT, CALL_DIRECT };

// Whether `address` could be a return address: inside an executable segment of a loaded image,
// right after a call instruction (e8 rel32, or ff /2 with any register or memory operand), or a
// signal restorer. CALL_DIRECT sets `*target` to the called address.
static int perf_call_before(const perf_unwind_context *context, uintptr_t address, uintptr_t *target) {
    const perf_unwind_segment *segment = perf_code_segment(context, address);
    if (segment == NULL) return CALL_NONE;
    if (!(segment->flags & PF_R)) return CALL_INDIRECT;  // execute-only code: cannot check the call
    uintptr_t available = address - segment->start < 8 ? address - segment->start : 8;
    const uint8_t *code = (const uint8_t *)address;
    // A signal handler returns to the restorer (mov $15,%rax; syscall: rt_sigreturn), which
    // follows no call.
    static const uint8_t restorer[9] = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};
    if (segment->end - address >= sizeof restorer && memcmp(code, restorer, sizeof restorer) == 0)
        return CALL_INDIRECT;
    if (available >= 5 && code[-5] == 0xe8) {
        int32_t displacement;
        memcpy(&displacement, code - 4, 4);
        *target = address + (uintptr_t)(intptr_t)displacement;
        return CALL_DIRECT;
    }
    for (uintptr_t length = 2; length <= 7 && length <= available; length++) {
        if (code[-(intptr_t)length] != 0xff) continue;
        uint8_t modrm = code[-(intptr_t)length + 1];
        if ((modrm >> 3 & 7) != 2) continue;  // ff /2 is call; /4 is jmp
        uint8_t mod = modrm >> 6, rm = modrm & 7;
        uintptr_t expected;
        if (mod == 3) {
            expected = 2;
        } else if (rm == 4) {  // a SIB byte follows
            if (length < 3) continue;
            uint8_t base = code[-(intptr_t)length + 2] & 7;
            expected = mod == 0 ? (base == 5 ? 7 : 3) : (mod == 1 ? 4 : 7);
        } else {
            expected = mod == 0 ? (rm == 5 ? 6 : 2) : (mod == 1 ? 3 : 6);
        }
        if (expected == length) return CALL_INDIRECT;
    }
    return CALL_NONE;
}

// Where a PLT entry at `address` jumps ([endbr64] [bnd] jmp *GOT(%rip)), or `address` itself
// when it is not one.
static uintptr_t perf_through_plt(const perf_unwind_context *context, uintptr_t address) {
    const perf_unwind_segment *segment = perf_code_segment(context, address);
    if (segment == NULL || !(segment->flags & PF_R) || segment->end - address < 11) return address;
    const uint8_t *code = (const uint8_t *)address;
    if (code[0] == 0xf3 && code[1] == 0x0f && code[2] == 0x1e && code[3] == 0xfa) code += 4;
    if (code[0] == 0xf2) code++;
    if (code[0] != 0xff || code[1] != 0x25) return address;
    int32_t displacement;
    memcpy(&displacement, code + 2, 4);
    uint64_t slot;
    if (perf_read_memory((uintptr_t)(code + 6) + (uintptr_t)(intptr_t)displacement, &slot, 8) != 8) return address;
    return (uintptr_t)slot;
}

// The function a direct call of `target` enters: through a PLT entry, then one jmp rel32 (Swift
// emits such thunks, e.g. a method forwarding to its overload).
static uintptr_t perf_resolve_callee(const perf_unwind_context *context, uintptr_t target) {
    target = perf_through_plt(context, target);
    const perf_unwind_segment *segment = perf_code_segment(context, target);
    if (segment == NULL || !(segment->flags & PF_R) || segment->end - target < 5) return target;
    const uint8_t *code = (const uint8_t *)target;
    if (code[0] != 0xe9) return target;
    int32_t displacement;
    memcpy(&displacement, code + 1, 4);
    return target + 5 + (uintptr_t)(intptr_t)displacement;
}

// For a function without CFI: whether it keeps no frame pointer, judged from the first plausible
// return address at or above `sp` (within 2 KiB). It counts when it follows a direct call of a
// function that can contain `pc`: starting at or below it, in the same segment, above `nearest`
// (the last function with an FDE below pc, 0 when unknown: then within 64 KiB). `*slot_out` is
// where that return address is.
bool perf_scan_return_address(const perf_unwind_context *context, uintptr_t sp, uintptr_t pc,
                              uintptr_t nearest, uintptr_t *slot_out) {
    if (sp < context->stack_low || sp >= context->stack_high) return false;
    const perf_unwind_segment *segment = perf_code_segment(context, pc);
    uintptr_t limit = context->stack_high - sp > 2048 ? sp + 2048 : context->stack_high;
    for (uintptr_t slot = (sp + 7) & ~(uintptr_t)7; slot + 8 <= limit; slot += 8) {
        uint64_t return_address;
        memcpy(&return_address, context->stack + (slot - context->stack_low), 8);
        uintptr_t target = 0;
        int call = perf_call_before(context, (uintptr_t)return_address, &target);
        if (call == CALL_NONE) continue;
        if (call != CALL_DIRECT) return false;
        uintptr_t callee = perf_resolve_callee(context, target);
        bool contains = segment != NULL && callee >= segment->start && callee <= pc &&
                        (nearest != 0 ? callee > nearest : pc - callee < 65536);
        if (contains) *slot_out = slot;
        return contains;
    }
    return false;
}

// Finds the frame record (saved rbp, return address) of a frame-pointer function whose rbp is
// not known, scanning up from its `sp` (at most 8 KiB): the record's address L is its rbp.
//
// The function's own locals lie between sp and L and may hold stale records of calls made
// earlier at this depth, so the first slot that merely looks like a record can be wrong. The
// best evidence is a return address right after a direct call of this very function (entry
// `function`, when its FDE is known): such a slot is taken wherever it is, whatever the saved
// rbp holds (a caller without frame pointers may use rbp for anything). Failing that, the first
// slot with a plausible return address (after any call) and a saved rbp of 0 or a stack address
// above it is taken.
bool perf_scan_frame_record(const perf_unwind_context *context, uintptr_t sp, uintptr_t function,
                            uint64_t *rbp_out) {
    if (sp < context->stack_low || sp >= context->stack_high) return false;
    uintptr_t limit = context->stack_high - sp > 8192 ? sp + 8192 : context->stack_high;
    uintptr_t fallback = 0;
    for (uintptr_t slot = (sp + 7) & ~(uintptr_t)7; slot + 16 <= limit; slot += 8) {
        uint64_t saved_rbp, return_address;
        memcpy(&saved_rbp, context->stack + (slot - context->stack_low), 8);
        memcpy(&return_address, context->stack + (slot + 8 - context->stack_low), 8);
        bool chained = saved_rbp == 0 || (saved_rbp > slot && saved_rbp < context->stack_high);
        if (!chained && function == 0) continue;
        uintptr_t target = 0;
        int call = perf_call_before(context, (uintptr_t)return_address, &target);
        if (call == CALL_DIRECT && function != 0 &&
            (target == function || perf_resolve_callee(context, target) == function)) {
            *rbp_out = slot;
            return true;
        }
        if (call != CALL_NONE && chained && fallback == 0) {
            fallback = slot;
            if (function == 0) break;
        }
    }
    if (fallback == 0) return false;
    *rbp_out = fallback;
    return true;
}

#endif

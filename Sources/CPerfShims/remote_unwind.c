// Unwinds another thread of this process that is blocked in a system call, without signalling it.
//
// Why not SIGPROF: a handler that runs on a thread blocked in sleep, poll or read cuts the call
// short (EINTR, or a short sleep), whatever SA_RESTART says, so sampling would change what the
// program does. A blocked thread needs no signal anyway: the kernel reports its stack pointer
// and program counter at the call in /proc/self/task/<tid>/syscall, its stack is plain memory of
// our own process, and the loaded images' .eh_frame says how to find each caller from there.
//
// The walk: read the syscall line; copy the stack from sp to the top of its mapping (at most
// 512 KiB) with one process_vm_readv; read the line again (a thread that moved meanwhile gives
// a torn copy: report it); then run DWARF call frame information over the copy, frame by frame.
// At the call only rsp and rip are known. The first frame-pointer function met before any frame
// saved rbp needs rbp to find its CFA: the walk then scans the stack for that function's frame
// record (saved rbp, return address). Every read is bounds-checked: stack reads against the copy
// (or through perf_read_memory), unwind-table reads against the image's mapped segments.
#define _GNU_SOURCE
#include "CPerfRemoteUnwind.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <elf.h>
#include <link.h>
#endif

// MARK: - /proc/self/task/<tid>/syscall

// Reads a small /proc file whole (open/read/close). Returns the bytes read, or -1.
static ssize_t perf_read_proc_file(const char *path, char *buffer, size_t capacity) {
    int fd;
    do {
        fd = open(path, O_RDONLY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return -1;
    size_t used = 0;
    while (used < capacity) {
        ssize_t n = read(fd, buffer + used, capacity - used);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            close(fd);
            return -1;
        }
        if (n == 0) break;
        used += (size_t)n;
    }
    close(fd);
    return (ssize_t)used;
}

// Appends the decimal digits of `value` (> 0) at `out`; returns the end.
static char *perf_append_decimal(char *out, uint32_t value) {
    char digits[10];
    int count = 0;
    do {
        digits[count++] = (char)('0' + value % 10);
        value /= 10;
    } while (value != 0);
    while (count > 0) *out++ = digits[--count];
    return out;
}

static const char *perf_skip_spaces(const char *at, const char *end) {
    while (at < end && *at == ' ') at++;
    return at;
}

// Parses an optionally negative decimal number. Returns the position after it, or NULL.
static const char *perf_parse_decimal(const char *at, const char *end, int64_t *out) {
    at = perf_skip_spaces(at, end);
    bool negative = at < end && *at == '-';
    if (negative) at++;
    const char *digits = at;
    int64_t value = 0;
    while (at < end && *at >= '0' && *at <= '9' && at - digits < 18) value = value * 10 + (*at++ - '0');
    if (at == digits) return NULL;
    *out = negative ? -value : value;
    return at;
}

// Parses "0x" followed by up to 16 hex digits. Returns the position after it, or NULL.
static const char *perf_parse_hex(const char *at, const char *end, uint64_t *out) {
    at = perf_skip_spaces(at, end);
    if (end - at < 3 || at[0] != '0' || at[1] != 'x') return NULL;
    at += 2;
    const char *digits = at;
    uint64_t value = 0;
    for (; at < end && at - digits < 16; at++) {
        char c = *at;
        int digit = c >= '0' && c <= '9' ? c - '0' : (c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1);
        if (digit < 0) break;
        value = value << 4 | (uint64_t)digit;
    }
    if (at == digits) return NULL;
    *out = value;
    return at;
}

int perf_thread_read_syscall(int32_t tid, perf_thread_syscall *out) {
    memset(out, 0, sizeof *out);
    out->state = PERF_THREAD_GONE;
    out->nr = -1;
    if (tid <= 0) return -1;
    char path[48] = "/proc/self/task/";
    char *end = perf_append_decimal(path + strlen(path), (uint32_t)tid);
    memcpy(end, "/syscall", sizeof "/syscall");
    // "nr 0xa1 ... 0xa6 0xsp 0xpc\n" is at most ~180 bytes.
    char line[256];
    ssize_t length = perf_read_proc_file(path, line, sizeof line);
    if (length <= 0) return -1;
    const char *at = line, *limit = line + length;
    if (length >= 7 && memcmp(line, "running", 7) == 0) {
        out->state = PERF_THREAD_RUNNING;
        return 0;
    }
    int64_t nr;
    if ((at = perf_parse_decimal(at, limit, &nr)) == NULL) return -1;
    if (nr >= 0) {
        for (int i = 0; i < 6 && at != NULL; i++) at = perf_parse_hex(at, limit, &out->args[i]);
    }
    uint64_t sp = 0, pc = 0;
    if (at != NULL) at = perf_parse_hex(at, limit, &sp);
    if (at != NULL) at = perf_parse_hex(at, limit, &pc);
    if (at == NULL) {
        memset(out->args, 0, sizeof out->args);
        return -1;
    }
    out->state = nr >= 0 ? PERF_THREAD_BLOCKED : PERF_THREAD_USER;
    out->nr = nr >= 0 ? nr : -1;
    out->sp = sp;
    out->pc = pc;
    return 0;
}

// MARK: - Fault-free memory reads

// 1 once process_vm_readv turned out not to be permitted (seccomp, old kernel).
static int perf_vm_readv_unavailable;
// /proc/self/mem, opened on first use of the fallback and kept open; -1 until then.
static int perf_mem_fd = -1;

static int perf_mem_file(void) {
    int fd = __atomic_load_n(&perf_mem_fd, __ATOMIC_ACQUIRE);
    if (fd >= 0) return fd;
    int opened = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
    if (opened < 0) return -1;
    int expected = -1;
    if (!__atomic_compare_exchange_n(&perf_mem_fd, &expected, opened, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        close(opened);  // another thread opened it first
        return expected;
    }
    return opened;
}

size_t perf_read_memory(uintptr_t address, void *buffer, size_t length) {
    // Page 0 is never mapped; addresses from 2^63 up are the kernel's (and not a valid offset of
    // /proc/self/mem).
    if (buffer == NULL || length == 0 || address < 4096 || address > (uintptr_t)INT64_MAX) return 0;
    if (length > (uintptr_t)INT64_MAX - address) length = (size_t)((uintptr_t)INT64_MAX - address);
    int saved_errno = errno;
    uint8_t *out = buffer;
    size_t done = 0;
    if (!__atomic_load_n(&perf_vm_readv_unavailable, __ATOMIC_RELAXED)) {
        pid_t self = getpid();
        while (done < length) {
            struct iovec local = {out + done, length - done};
            struct iovec remote = {(void *)(address + done), length - done};
            // A range that runs into unmapped memory copies up to there and returns the count.
            ssize_t n = process_vm_readv(self, &local, 1, &remote, 1, 0);
            if (n > 0) {
                done += (size_t)n;
            } else if (n < 0 && errno == EINTR) {
                continue;
            } else if (n < 0 && done == 0 && (errno == ENOSYS || errno == EPERM)) {
                __atomic_store_n(&perf_vm_readv_unavailable, 1, __ATOMIC_RELAXED);
                break;
            } else {
                errno = saved_errno;
                return done;  // EFAULT: unmapped from here on
            }
        }
        if (done == length) {
            errno = saved_errno;
            return done;
        }
    }
    int fd = perf_mem_file();
    while (fd >= 0 && done < length) {
        ssize_t n = pread(fd, out + done, length - done, (off_t)(address + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;  // EIO: unmapped from here on
        done += (size_t)n;
    }
    errno = saved_errno;
    return done;
}

#if defined(__x86_64__)

// MARK: - The stack copy

// Finds the line of /proc/self/maps whose range contains `address`. The file is read in chunks
// and parsed as it streams (only each line's "start-end" matters); lines are sorted by address,
// so the read stops at the first line past it. Returns 1 when found.
static int perf_find_mapping(uintptr_t address, uintptr_t *start_out, uintptr_t *end_out) {
    int fd;
    do {
        fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return 0;
    enum { START, END, SKIP } field = START;
    uintptr_t start = 0, end = 0;
    int digits = 0, found = 0, finished = 0;
    size_t total = 0;
    char chunk[8192];
    // 32 MiB of maps is ~300,000 mappings: give up rather than spin.
    while (!finished && total < (32u << 20)) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        total += (size_t)n;
        for (ssize_t i = 0; i < n && !finished; i++) {
            char c = chunk[i];
            if (c == '\n') {
                field = START;
                start = end = 0;
                digits = 0;
                continue;
            }
            if (field == SKIP) continue;
            int digit = c >= '0' && c <= '9' ? c - '0' : (c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1);
            if (digit >= 0 && digits < 16) {
                if (field == START) start = start << 4 | (uintptr_t)digit;
                else end = end << 4 | (uintptr_t)digit;
                digits++;
            } else if (field == START && c == '-' && digits > 0) {
                field = END;
                digits = 0;
            } else if (field == END && c == ' ' && digits > 0) {
                if (address >= start && address < end) {
                    *start_out = start;
                    *end_out = end;
                    found = finished = 1;
                } else if (start > address) {
                    finished = 1;
                }
                field = SKIP;
            } else {
                field = SKIP;  // not a line we understand
            }
        }
    }
    close(fd);
    return found;
}

// MARK: - Loaded images

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

// dl_iterate_phdr callback: records each image's PT_LOAD segments and its .eh_frame_hdr.
static int perf_collect_image(struct dl_phdr_info *info, size_t size, void *data) {
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
static void perf_index_code(perf_unwind_context *context) {
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
static const perf_unwind_segment *perf_code_segment(const perf_unwind_context *context, uintptr_t address) {
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
static uintptr_t perf_readable_end(const perf_unwind_context *context, uint32_t image, uintptr_t address) {
    const perf_unwind_image *entry = &context->images[image];
    for (uint32_t i = entry->first_segment; i < entry->first_segment + entry->segment_count; i++) {
        const perf_unwind_segment *segment = &context->segments[i];
        if (address >= segment->start && address < segment->end && (segment->flags & PF_R)) return segment->end;
    }
    return 0;
}

// MARK: - Stack reads

// Reads the 8-byte word at `address`: from the copy when it is there, else from live memory.
static bool perf_stack_word(const perf_unwind_context *context, uintptr_t address, uint64_t *out) {
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
static bool perf_scan_return_address(const perf_unwind_context *context, uintptr_t sp, uintptr_t pc,
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
static bool perf_scan_frame_record(const perf_unwind_context *context, uintptr_t sp, uintptr_t function,
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

// MARK: - DWARF readers

#define DW_EH_PE_omit 0xff
#define DW_EH_PE_indirect 0x80

// A bounds-checked reader of unwind tables in image memory: [at, end). A read past the end
// clears `ok` and returns 0; callers check `ok` once after a group of reads.
typedef struct {
    uintptr_t at, end;
    bool ok;
} perf_cursor;

static uint64_t perf_read_bytes(perf_cursor *cursor, size_t count) {
    if (!cursor->ok || cursor->end - cursor->at < count || cursor->at > cursor->end) {
        cursor->ok = false;
        return 0;
    }
    uint64_t value = 0;
    memcpy(&value, (const void *)cursor->at, count);  // little-endian
    cursor->at += count;
    return value;
}

static uint8_t perf_read_u8(perf_cursor *cursor) { return (uint8_t)perf_read_bytes(cursor, 1); }

static uint64_t perf_read_uleb(perf_cursor *cursor) {
    uint64_t value = 0;
    for (unsigned shift = 0; cursor->ok; shift += 7) {
        uint8_t byte = perf_read_u8(cursor);
        if (shift < 64) value |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) return value;
        if (shift > 140) cursor->ok = false;  // padded beyond any sense
    }
    return 0;
}

static int64_t perf_read_sleb(perf_cursor *cursor) {
    uint64_t value = 0;
    for (unsigned shift = 0; cursor->ok; shift += 7) {
        uint8_t byte = perf_read_u8(cursor);
        if (shift < 64) value |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            if (shift + 7 < 64 && (byte & 0x40)) value |= ~(uint64_t)0 << (shift + 7);
            return (int64_t)value;
        }
        if (shift > 140) cursor->ok = false;
    }
    return 0;
}

// Skips a block (uleb length, then that many bytes); returns its start.
static uintptr_t perf_read_block(perf_cursor *cursor, uint64_t *length_out) {
    uint64_t length = perf_read_uleb(cursor);
    uintptr_t start = cursor->at;
    if (!cursor->ok || length > cursor->end - cursor->at) {
        cursor->ok = false;
        return 0;
    }
    cursor->at += length;
    *length_out = length;
    return start;
}

// Reads a pointer in DW_EH_PE `encoding`. `data_base` is the base of datarel (the start of
// .eh_frame_hdr), `function_base` of funcrel. textrel and aligned (not used by x86_64 tools)
// fail the cursor; indirect pointers are loaded through perf_read_memory.
static uintptr_t perf_read_encoded(perf_cursor *cursor, uint8_t encoding, uintptr_t data_base,
                                   uintptr_t function_base) {
    if (encoding == DW_EH_PE_omit) return 0;
    uintptr_t field = cursor->at;
    uint64_t value;
    switch (encoding & 0x0f) {
    case 0x00: value = perf_read_bytes(cursor, 8); break;                     // absptr
    case 0x01: value = perf_read_uleb(cursor); break;                         // uleb128
    case 0x02: value = perf_read_bytes(cursor, 2); break;                     // udata2
    case 0x03: value = perf_read_bytes(cursor, 4); break;                     // udata4
    case 0x04: value = perf_read_bytes(cursor, 8); break;                     // udata8
    case 0x09: value = (uint64_t)perf_read_sleb(cursor); break;               // sleb128
    case 0x0a: value = (uint64_t)(int64_t)(int16_t)perf_read_bytes(cursor, 2); break;  // sdata2
    case 0x0b: value = (uint64_t)(int64_t)(int32_t)perf_read_bytes(cursor, 4); break;  // sdata4
    case 0x0c: value = perf_read_bytes(cursor, 8); break;                     // sdata8
    default: cursor->ok = false; return 0;
    }
    switch (encoding & 0x70) {
    case 0x00: break;
    case 0x10: value += field; break;  // pcrel
    case 0x30:                         // datarel
        if (data_base == 0) cursor->ok = false;
        value += data_base;
        break;
    case 0x40: value += function_base; break;  // funcrel
    default: cursor->ok = false; return 0;
    }
    if ((encoding & DW_EH_PE_indirect) && cursor->ok) {
        uint64_t loaded;
        if (perf_read_memory((uintptr_t)value, &loaded, 8) != 8) cursor->ok = false;
        value = loaded;
    }
    return (uintptr_t)value;
}

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

// Reads an entry's length: sets `*end` to the entry's end and returns the position after the
// length field, or 0 for the terminator or a malformed entry.
static uintptr_t perf_entry_bounds(uintptr_t address, uintptr_t limit, uintptr_t *end, bool *is64) {
    perf_cursor cursor = {address, limit, true};
    uint64_t length = perf_read_bytes(&cursor, 4);
    *is64 = length == 0xffffffffu;
    if (*is64) length = perf_read_bytes(&cursor, 8);
    if (!cursor.ok || length == 0 || length > limit - cursor.at) return 0;
    *end = cursor.at + (uintptr_t)length;
    return cursor.at;
}

static bool perf_parse_cie(uintptr_t address, uintptr_t limit, perf_cie *cie) {
    uintptr_t end;
    bool is64;
    uintptr_t body = perf_entry_bounds(address, limit, &end, &is64);
    if (body == 0) return false;
    perf_cursor cursor = {body, end, true};
    if (perf_read_bytes(&cursor, is64 ? 8 : 4) != 0) return false;  // not a CIE
    uint8_t version = perf_read_u8(&cursor);
    if (version != 1 && version != 3 && version != 4) return false;
    // The augmentation string: "z" first when augmentation data follows, then one letter each.
    uintptr_t augmentation = cursor.at;
    while (cursor.ok && perf_read_u8(&cursor) != 0) {
    }
    if (!cursor.ok) return false;
    if (version == 4) {
        uint8_t address_size = perf_read_u8(&cursor);
        uint8_t segment_size = perf_read_u8(&cursor);
        if (address_size != 8 || segment_size != 0) return false;
    }
    memset(cie, 0, sizeof *cie);
    cie->code_align = perf_read_uleb(&cursor);
    cie->data_align = perf_read_sleb(&cursor);
    cie->return_register = version == 1 ? perf_read_u8(&cursor) : perf_read_uleb(&cursor);
    cie->fde_encoding = 0;  // absptr unless "R" says otherwise
    const char *letters = (const char *)augmentation;
    uintptr_t data_end = 0;
    if (letters[0] == 'z') {
        uint64_t data_length = perf_read_uleb(&cursor);
        if (!cursor.ok || data_length > cursor.end - cursor.at) return false;
        data_end = cursor.at + data_length;
        cie->has_augmentation_data = true;
        letters++;
    }
    for (; *letters && cursor.ok; letters++) {
        switch (*letters) {
        case 'R': cie->fde_encoding = perf_read_u8(&cursor); break;
        case 'L': (void)perf_read_u8(&cursor); break;  // LSDA encoding: the FDE's data is skipped whole
        case 'P': {
            uint8_t encoding = perf_read_u8(&cursor);
            // Skip the personality pointer: only its format (size) matters, not its value.
            (void)perf_read_encoded(&cursor, (uint8_t)(encoding & 0x0f), 0, 0);
            break;
        }
        case 'S': cie->signal_frame = true; break;
        case 'B':  // AArch64 pointer authentication key, MTE tagged frames: no data
        case 'G': break;
        default:
            // An unknown letter: its data can only be skipped when the length was given.
            if (data_end == 0) return false;
            cursor.at = data_end;
            goto done;
        }
    }
done:
    if (!cursor.ok) return false;
    if (data_end != 0) {
        if (cursor.at > data_end) return false;
        cursor.at = data_end;
    }
    cie->instructions = cursor.at;
    cie->instructions_end = end;
    return true;
}

// Parses the FDE at `address` of an .eh_frame ending at `limit` (its CIE must lie in
// [section_start, limit)).
static bool perf_parse_fde(uintptr_t address, uintptr_t section_start, uintptr_t limit, perf_fde *fde) {
    uintptr_t end;
    bool is64;
    uintptr_t body = perf_entry_bounds(address, limit, &end, &is64);
    if (body == 0) return false;
    perf_cursor cursor = {body, end, true};
    uint64_t cie_offset = perf_read_bytes(&cursor, is64 ? 8 : 4);
    if (!cursor.ok || cie_offset == 0 || cie_offset > body - section_start) return false;
    if (!perf_parse_cie(body - (uintptr_t)cie_offset, limit, &fde->cie)) return false;
    uint8_t encoding = fde->cie.fde_encoding;
    fde->pc_begin = perf_read_encoded(&cursor, encoding, 0, 0);
    uintptr_t range = perf_read_encoded(&cursor, (uint8_t)(encoding & 0x0f), 0, 0);
    fde->pc_end = fde->pc_begin + range;
    if (fde->cie.has_augmentation_data) {
        uint64_t length;
        (void)perf_read_block(&cursor, &length);  // the LSDA pointer
    }
    if (!cursor.ok) return false;
    fde->instructions = cursor.at;
    fde->instructions_end = end;
    return true;
}

// Finds the FDE covering `pc` in image `index`: through .eh_frame_hdr's sorted table when it has
// one, else by walking .eh_frame entry by entry.
// `*nearest` (when not NULL) receives the start of the last function with an FDE at or below pc
// (0 when unknown): a function without one that contains pc starts above it.
static bool perf_find_fde(const perf_unwind_context *context, uint32_t index, uintptr_t pc, perf_fde *fde,
                          uintptr_t *nearest) {
    if (nearest != NULL) *nearest = 0;
    const perf_unwind_image *image = &context->images[index];
    uintptr_t header = image->eh_frame_hdr;
    if (header == 0) return false;
    uintptr_t header_end = perf_readable_end(context, index, header);
    if (header_end == 0) return false;
    if (image->eh_frame_hdr_size > 0 && image->eh_frame_hdr_size < header_end - header)
        header_end = header + image->eh_frame_hdr_size;
    perf_cursor cursor = {header, header_end, true};
    uint8_t version = perf_read_u8(&cursor);
    uint8_t frame_encoding = perf_read_u8(&cursor);
    uint8_t count_encoding = perf_read_u8(&cursor);
    uint8_t table_encoding = perf_read_u8(&cursor);
    if (!cursor.ok || version != 1) return false;
    uintptr_t eh_frame = perf_read_encoded(&cursor, frame_encoding, header, 0);
    if (!cursor.ok || frame_encoding == DW_EH_PE_omit) return false;
    uintptr_t eh_frame_end = perf_readable_end(context, index, eh_frame);
    if (eh_frame_end == 0) return false;

    // The table: (initial location, FDE address) pairs of datarel sdata4, sorted by location.
    if (count_encoding != DW_EH_PE_omit && table_encoding == 0x3b) {
        uint64_t count = perf_read_encoded(&cursor, count_encoding, header, 0);
        if (!cursor.ok) return false;
        uintptr_t table = cursor.at;
        if (count > (header_end - table) / 8) count = (header_end - table) / 8;
        if (count == 0) return false;
        size_t low = 0, high = (size_t)count;  // find the last entry with location <= pc
        while (low < high) {
            size_t middle = low + (high - low) / 2;
            int32_t location;
            memcpy(&location, (const void *)(table + middle * 8), 4);
            if (header + (uintptr_t)(intptr_t)location <= pc) low = middle + 1;
            else high = middle;
        }
        if (low == 0) return false;
        int32_t location, offset;
        memcpy(&location, (const void *)(table + (low - 1) * 8), 4);
        if (nearest != NULL) *nearest = header + (uintptr_t)(intptr_t)location;
        memcpy(&offset, (const void *)(table + (low - 1) * 8 + 4), 4);
        uintptr_t address = header + (uintptr_t)(intptr_t)offset;
        if (address < eh_frame || address >= eh_frame_end) return false;
        return perf_parse_fde(address, eh_frame, eh_frame_end, fde) && pc >= fde->pc_begin && pc < fde->pc_end;
    }

    // No usable table: walk .eh_frame to its terminator (a zero length).
    uintptr_t at = eh_frame;
    for (int entries = 0; entries < (1 << 20) && at < eh_frame_end; entries++) {
        uintptr_t end;
        bool is64;
        uintptr_t body = perf_entry_bounds(at, eh_frame_end, &end, &is64);
        if (body == 0) return false;
        perf_cursor id = {body, end, true};
        if (perf_read_bytes(&id, is64 ? 8 : 4) != 0 && id.ok && perf_parse_fde(at, eh_frame, eh_frame_end, fde) &&
            pc >= fde->pc_begin && pc < fde->pc_end)
            return true;
        at = end;
    }
    return false;
}

// MARK: - Call frame programs

enum { RULE_SAME = 0, RULE_UNDEFINED, RULE_OFFSET, RULE_VAL_OFFSET, RULE_REGISTER, RULE_EXPRESSION, RULE_VAL_EXPRESSION };

typedef struct {
    uint8_t kind;
    int64_t value;  // offset from the CFA, or a register number
    uintptr_t expression;
    uint64_t expression_length;
} perf_rule;

// One row of the CFI table: how to find the CFA and each tracked register of the caller.
typedef struct {
    bool cfa_is_expression;
    uint64_t cfa_register;
    int64_t cfa_offset;
    uintptr_t cfa_expression;
    uint64_t cfa_expression_length;
    perf_rule rules[PERF_COLUMNS];
} perf_row;

#define PERF_REMEMBER_DEPTH 8

// Runs the call frame instructions [start, end) from location `location` until the row for
// `pc`. `initial` is the row after the CIE's instructions (for DW_CFA_restore); NULL while
// running those. Returns false on anything malformed or unsupported.
static bool perf_run_cfa_program(const perf_fde *fde, uintptr_t start, uintptr_t end, uintptr_t pc,
                                 perf_row *row, const perf_row *initial) {
    perf_row remembered[PERF_REMEMBER_DEPTH];
    int depth = 0;
    uintptr_t location = fde->pc_begin;
    perf_cursor cursor = {start, end, true};
    const perf_cie *cie = &fde->cie;
    while (cursor.ok && cursor.at < cursor.end) {
        uint8_t opcode = perf_read_u8(&cursor);
        uint8_t low = opcode & 0x3f;
        uint64_t reg = 0, advance = 0;
        bool advances = false;
        perf_rule rule = {RULE_SAME, 0, 0, 0};
        bool sets_rule = false;
        switch (opcode >> 6) {
        case 1:  // DW_CFA_advance_loc
            advance = low;
            advances = true;
            break;
        case 2:  // DW_CFA_offset
            reg = low;
            rule.kind = RULE_OFFSET;
            rule.value = (int64_t)perf_read_uleb(&cursor) * cie->data_align;
            sets_rule = true;
            break;
        case 3:  // DW_CFA_restore
            reg = low;
            if (initial == NULL) return false;
            if (reg < PERF_COLUMNS) row->rules[reg] = initial->rules[reg];
            break;
        default:
            switch (opcode) {
            case 0x00: break;  // DW_CFA_nop
            case 0x01: {       // DW_CFA_set_loc
                uintptr_t target = perf_read_encoded(&cursor, cie->fde_encoding, 0, 0);
                if (!cursor.ok) return false;
                if (pc < target) return true;
                location = target;
                break;
            }
            case 0x02: advance = perf_read_bytes(&cursor, 1); advances = true; break;  // advance_loc1
            case 0x03: advance = perf_read_bytes(&cursor, 2); advances = true; break;  // advance_loc2
            case 0x04: advance = perf_read_bytes(&cursor, 4); advances = true; break;  // advance_loc4
            case 0x05:  // DW_CFA_offset_extended
                reg = perf_read_uleb(&cursor);
                rule.kind = RULE_OFFSET;
                rule.value = (int64_t)perf_read_uleb(&cursor) * cie->data_align;
                sets_rule = true;
                break;
            case 0x06:  // DW_CFA_restore_extended
                reg = perf_read_uleb(&cursor);
                if (initial == NULL) return false;
                if (reg < PERF_COLUMNS) row->rules[reg] = initial->rules[reg];
                break;
            case 0x07:  // DW_CFA_undefined
                reg = perf_read_uleb(&cursor);
                rule.kind = RULE_UNDEFINED;
                sets_rule = true;
                break;
            case 0x08:  // DW_CFA_same_value
                reg = perf_read_uleb(&cursor);
                rule.kind = RULE_SAME;
                sets_rule = true;
                break;
            case 0x09:  // DW_CFA_register
                reg = perf_read_uleb(&cursor);
                rule.kind = RULE_REGISTER;
                rule.value = (int64_t)perf_read_uleb(&cursor);
                sets_rule = true;
                break;
            case 0x0a:  // DW_CFA_remember_state
                if (depth == PERF_REMEMBER_DEPTH) return false;
                remembered[depth++] = *row;
                break;
            case 0x0b:  // DW_CFA_restore_state
                if (depth == 0) return false;
                *row = remembered[--depth];
                break;
            case 0x0c:  // DW_CFA_def_cfa
                row->cfa_is_expression = false;
                row->cfa_register = perf_read_uleb(&cursor);
                row->cfa_offset = (int64_t)perf_read_uleb(&cursor);
                break;
            case 0x0d:  // DW_CFA_def_cfa_register
                row->cfa_is_expression = false;
                row->cfa_register = perf_read_uleb(&cursor);
                break;
            case 0x0e:  // DW_CFA_def_cfa_offset
                row->cfa_offset = (int64_t)perf_read_uleb(&cursor);
                break;
            case 0x0f:  // DW_CFA_def_cfa_expression
                row->cfa_is_expression = true;
                row->cfa_expression = perf_read_block(&cursor, &row->cfa_expression_length);
                break;
            case 0x10:  // DW_CFA_expression
            case 0x16:  // DW_CFA_val_expression
                reg = perf_read_uleb(&cursor);
                rule.kind = opcode == 0x10 ? RULE_EXPRESSION : RULE_VAL_EXPRESSION;
                rule.expression = perf_read_block(&cursor, &rule.expression_length);
                sets_rule = true;
                break;
            case 0x11:  // DW_CFA_offset_extended_sf
                reg = perf_read_uleb(&cursor);
                rule.kind = RULE_OFFSET;
                rule.value = perf_read_sleb(&cursor) * cie->data_align;
                sets_rule = true;
                break;
            case 0x12:  // DW_CFA_def_cfa_sf
                row->cfa_is_expression = false;
                row->cfa_register = perf_read_uleb(&cursor);
                row->cfa_offset = perf_read_sleb(&cursor) * cie->data_align;
                break;
            case 0x13:  // DW_CFA_def_cfa_offset_sf
                row->cfa_offset = perf_read_sleb(&cursor) * cie->data_align;
                break;
            case 0x14:  // DW_CFA_val_offset
                reg = perf_read_uleb(&cursor);
                rule.kind = RULE_VAL_OFFSET;
                rule.value = (int64_t)perf_read_uleb(&cursor) * cie->data_align;
                sets_rule = true;
                break;
            case 0x15:  // DW_CFA_val_offset_sf
                reg = perf_read_uleb(&cursor);
                rule.kind = RULE_VAL_OFFSET;
                rule.value = perf_read_sleb(&cursor) * cie->data_align;
                sets_rule = true;
                break;
            case 0x2e:  // DW_CFA_GNU_args_size: only matters to landing pads
                (void)perf_read_uleb(&cursor);
                break;
            case 0x2f:  // DW_CFA_GNU_negative_offset_extended
                reg = perf_read_uleb(&cursor);
                rule.kind = RULE_OFFSET;
                rule.value = -(int64_t)perf_read_uleb(&cursor) * cie->data_align;
                sets_rule = true;
                break;
            default: return false;  // not x86_64 CFI we know
            }
        }
        if (!cursor.ok) return false;
        if (advances) {
            // The current row covers [location, location + advance * code_align).
            uint64_t delta = advance * cie->code_align;
            if (delta > pc - location) return true;
            location += delta;
        }
        if (sets_rule && reg < PERF_COLUMNS) row->rules[reg] = rule;  // other columns: vector registers
    }
    return cursor.ok;
}

// MARK: - DWARF expressions

// Evaluates a DWARF expression (the small subset CFI uses: glibc's PLT and signal frame rules)
// with `initial` pushed first when `push_initial`. Registers must be known; memory comes from
// the stack copy or perf_read_memory.
static bool perf_evaluate(const perf_unwind_context *context, uintptr_t expression, uint64_t length,
                          const perf_regs *regs, bool push_initial, uint64_t initial, uint64_t *result) {
    uint64_t stack[16];
    int depth = 0;
    if (push_initial) stack[depth++] = initial;
    perf_cursor cursor = {expression, expression + (uintptr_t)length, true};
#define PERF_PUSH(v)                        \
    do {                                    \
        uint64_t pushed = (v);              \
        if (depth == 16) return false;      \
        stack[depth] = pushed;              \
        depth++;                            \
    } while (0)
#define PERF_NEED(n)                        \
    do {                                    \
        if (depth < (n)) return false;      \
    } while (0)
    while (cursor.ok && cursor.at < cursor.end) {
        uint8_t op = perf_read_u8(&cursor);
        if (op >= 0x30 && op <= 0x4f) {  // DW_OP_lit0..31
            PERF_PUSH((uint64_t)(op - 0x30));
            continue;
        }
        if (op >= 0x70 && op <= 0x8f) {  // DW_OP_breg0..31 sleb
            unsigned reg = op - 0x70u;
            int64_t offset = perf_read_sleb(&cursor);
            if (reg >= PERF_COLUMNS || !(regs->known & (1u << reg))) return false;
            PERF_PUSH(regs->value[reg] + (uint64_t)offset);
            continue;
        }
        uint64_t a, b;
        switch (op) {
        case 0x06:  // DW_OP_deref
            PERF_NEED(1);
            if (!perf_stack_word(context, (uintptr_t)stack[depth - 1], &stack[depth - 1])) return false;
            break;
        case 0x08: PERF_PUSH(perf_read_bytes(&cursor, 1)); break;                            // const1u
        case 0x09: PERF_PUSH((uint64_t)(int64_t)(int8_t)perf_read_bytes(&cursor, 1)); break;   // const1s
        case 0x0a: PERF_PUSH(perf_read_bytes(&cursor, 2)); break;                            // const2u
        case 0x0b: PERF_PUSH((uint64_t)(int64_t)(int16_t)perf_read_bytes(&cursor, 2)); break;  // const2s
        case 0x0c: PERF_PUSH(perf_read_bytes(&cursor, 4)); break;                            // const4u
        case 0x0d: PERF_PUSH((uint64_t)(int64_t)(int32_t)perf_read_bytes(&cursor, 4)); break;  // const4s
        case 0x0e:                                                                           // const8u
        case 0x0f: PERF_PUSH(perf_read_bytes(&cursor, 8)); break;                            // const8s
        case 0x10: PERF_PUSH(perf_read_uleb(&cursor)); break;                                // constu
        case 0x11: PERF_PUSH((uint64_t)perf_read_sleb(&cursor)); break;                      // consts
        case 0x12: PERF_NEED(1); PERF_PUSH(stack[depth - 1]); break;                         // dup
        case 0x13: PERF_NEED(1); depth--; break;                                             // drop
        case 0x14: PERF_NEED(2); PERF_PUSH(stack[depth - 2]); break;                         // over
        case 0x16:                                                                           // swap
            PERF_NEED(2);
            a = stack[depth - 1];
            stack[depth - 1] = stack[depth - 2];
            stack[depth - 2] = a;
            break;
        case 0x23: PERF_NEED(1); stack[depth - 1] += perf_read_uleb(&cursor); break;  // plus_uconst
        case 0x1a: case 0x1c: case 0x1e: case 0x21: case 0x22: case 0x24: case 0x25: case 0x27:
        case 0x29: case 0x2a: case 0x2b: case 0x2c: case 0x2d: case 0x2e:
            PERF_NEED(2);
            b = stack[--depth];
            a = stack[depth - 1];
            switch (op) {
            case 0x1a: a &= b; break;                                   // and
            case 0x1c: a -= b; break;                                   // minus
            case 0x1e: a *= b; break;                                   // mul
            case 0x21: a |= b; break;                                   // or
            case 0x22: a += b; break;                                   // plus
            case 0x24: a = b < 64 ? a << b : 0; break;                  // shl
            case 0x25: a = b < 64 ? a >> b : 0; break;                  // shr
            case 0x27: a ^= b; break;                                   // xor
            case 0x29: a = a == b; break;                               // eq
            case 0x2a: a = (int64_t)a >= (int64_t)b; break;             // ge
            case 0x2b: a = (int64_t)a > (int64_t)b; break;              // gt
            case 0x2c: a = (int64_t)a <= (int64_t)b; break;             // le
            case 0x2d: a = (int64_t)a < (int64_t)b; break;              // lt
            default: a = a != b; break;                                 // ne
            }
            stack[depth - 1] = a;
            break;
        default: return false;  // not needed by CFI we know
        }
    }
#undef PERF_PUSH
#undef PERF_NEED
    if (!cursor.ok || depth == 0) return false;
    *result = stack[depth - 1];
    return true;
}

// MARK: - Stepping

enum { STEP_STUCK = -1, STEP_OUTERMOST = 0, STEP_CALLER = 1 };

// Replaces `regs` (a frame at pc = regs->value[16]) with its caller's. `exact`: the pc is an
// interrupted instruction (the system call, or a signal frame's pc) rather than a return
// address, whose call may be the function's last instruction: then look up pc - 1.
// `signal_frame` tells whether this frame is a signal trampoline.
static int perf_step(const perf_unwind_context *context, perf_regs *regs, bool exact, bool *signal_frame) {
    uintptr_t pc = (uintptr_t)regs->value[PERF_REG_RIP];
    uintptr_t lookup = exact ? pc : pc - 1;
    *signal_frame = false;
    const perf_unwind_segment *segment = perf_code_segment(context, lookup);
    if (segment == NULL) return STEP_STUCK;
    perf_regs caller = {{0}, 0};
    uint64_t cfa;
    perf_fde fde;
    perf_row initial, row;
    memset(&initial, 0, sizeof initial);
    uintptr_t nearest;
    bool has_cfi = perf_find_fde(context, segment->image, lookup, &fde, &nearest) &&
                   fde.cie.return_register < PERF_COLUMNS &&
                   perf_run_cfa_program(&fde, fde.cie.instructions, fde.cie.instructions_end, lookup, &initial, NULL);
    if (has_cfi) {
        row = initial;
        has_cfi = perf_run_cfa_program(&fde, fde.instructions, fde.instructions_end, lookup, &row, &initial);
    }
    if (!has_cfi) {
        // No usable CFI. A small function without a frame pointer (its return address is the
        // first one above sp, right after a call of it) is recognised as such; anything else is
        // taken for a frame-pointer function (push %rbp; mov %rsp,%rbp).
        memset(&row, 0, sizeof row);
        uintptr_t sp = (uintptr_t)regs->value[PERF_REG_RSP], slot;
        if (perf_scan_return_address(context, sp, lookup, nearest, &slot)) {
            row.cfa_register = PERF_REG_RSP;
            row.cfa_offset = (int64_t)(slot + 8 - sp);
        } else {
            row.cfa_register = PERF_REG_RBP;
            row.cfa_offset = 16;
            row.rules[PERF_REG_RBP] = (perf_rule){RULE_OFFSET, -16, 0, 0};
        }
        row.rules[PERF_REG_RIP] = (perf_rule){RULE_OFFSET, -8, 0, 0};
        fde.cie.return_register = PERF_REG_RIP;
    } else {
        *signal_frame = fde.cie.signal_frame;
    }

    // The CFA. A rule on rbp while rbp is unknown means a frame-pointer function whose rbp is
    // still its own (no inner frame saved it): find its frame record on the stack.
    if (row.cfa_is_expression) {
        if (!perf_evaluate(context, row.cfa_expression, row.cfa_expression_length, regs, false, 0, &cfa))
            return STEP_STUCK;
    } else {
        if (row.cfa_register >= PERF_COLUMNS) return STEP_STUCK;
        unsigned reg = (unsigned)row.cfa_register;
        if (!(regs->known & (1u << reg))) {
            uint64_t rbp;
            if (reg != PERF_REG_RBP || !(regs->known & (1u << PERF_REG_RSP)) ||
                !perf_scan_frame_record(context, (uintptr_t)regs->value[PERF_REG_RSP], has_cfi ? fde.pc_begin : 0,
                                        &rbp))
                return STEP_STUCK;
            regs->value[PERF_REG_RBP] = rbp;
            regs->known |= 1u << PERF_REG_RBP;
        }
        cfa = regs->value[reg] + (uint64_t)row.cfa_offset;
    }

    // The caller's registers. By definition its rsp is the CFA, unless a rule says otherwise.
    for (unsigned reg = 0; reg < PERF_COLUMNS; reg++) {
        const perf_rule *rule = &row.rules[reg];
        uint64_t value = 0;
        bool known = false;
        switch (rule->kind) {
        case RULE_SAME:
            if (reg == PERF_REG_RSP) {
                value = cfa;
                known = true;
            } else {
                value = regs->value[reg];
                known = (regs->known >> reg) & 1;
            }
            break;
        case RULE_UNDEFINED: break;
        case RULE_OFFSET: known = perf_stack_word(context, (uintptr_t)(cfa + (uint64_t)rule->value), &value); break;
        case RULE_VAL_OFFSET:
            value = cfa + (uint64_t)rule->value;
            known = true;
            break;
        case RULE_REGISTER:
            if ((uint64_t)rule->value < PERF_COLUMNS) {
                value = regs->value[rule->value];
                known = (regs->known >> rule->value) & 1;
            }
            break;
        case RULE_EXPRESSION: {
            uint64_t address;
            known = perf_evaluate(context, rule->expression, rule->expression_length, regs, true, cfa, &address) &&
                    perf_stack_word(context, (uintptr_t)address, &value);
            break;
        }
        case RULE_VAL_EXPRESSION:
            known = perf_evaluate(context, rule->expression, rule->expression_length, regs, true, cfa, &value);
            break;
        }
        if (known) {
            caller.value[reg] = value;
            caller.known |= 1u << reg;
        }
    }
    // The return address is the caller's pc. Undefined marks the outermost frame (_start,
    // clone's child); a rule we could not evaluate leaves us stuck.
    unsigned return_register = (unsigned)fde.cie.return_register;
    if (row.rules[return_register].kind == RULE_UNDEFINED) return STEP_OUTERMOST;
    if (!(caller.known & (1u << return_register)) || !(caller.known & (1u << PERF_REG_RSP))) return STEP_STUCK;
    caller.value[PERF_REG_RIP] = caller.value[return_register];
    caller.known |= 1u << PERF_REG_RIP;
    // The stack grows down: a caller's frame is above its callee's (a signal frame can move to
    // another stack, e.g. from a sigaltstack).
    if (!*signal_frame && caller.value[PERF_REG_RSP] <= regs->value[PERF_REG_RSP]) return STEP_STUCK;
    *regs = caller;
    return STEP_CALLER;
}

// Walks from the registers at the system call to the outermost frame or `capacity` frames.
static int perf_unwind_frames(const perf_unwind_context *context, uint64_t sp, uint64_t pc, uintptr_t *frames,
                              int capacity) {
    perf_regs regs = {{0}, 0};
    regs.value[PERF_REG_RSP] = sp;
    regs.value[PERF_REG_RIP] = pc;
    regs.known = 1u << PERF_REG_RSP | 1u << PERF_REG_RIP;
    frames[0] = (uintptr_t)pc;
    int count = 1;
    bool exact = true;
    while (count < capacity) {
        bool signal_frame;
        if (perf_step(context, &regs, exact, &signal_frame) != STEP_CALLER) break;
        uintptr_t caller = (uintptr_t)regs.value[PERF_REG_RIP];
        if (caller == 0 || perf_code_segment(context, signal_frame ? caller : caller - 1) == NULL) break;
        frames[count++] = caller;
        exact = signal_frame;
    }
    return count;
}

// The unwind proper runs under the dynamic loader's lock, so no image can be unmapped while its
// tables are read: perf_walk_locked is the callback of dl_iterate_phdr, which calls
// dl_iterate_phdr again (its lock is recursive) to list every image, then walks, then stops the
// outer iteration.
typedef struct {
    perf_unwind_context *context;
    uint64_t sp, pc;
    uintptr_t *frames;
    int capacity;
    int count;
} perf_walk;

static int perf_walk_locked(struct dl_phdr_info *info, size_t size, void *data) {
    (void)info;
    (void)size;
    perf_walk *walk = data;
    walk->context->image_count = walk->context->segment_count = 0;
    dl_iterate_phdr(perf_collect_image, walk->context);
    perf_index_code(walk->context);
    walk->count = perf_unwind_frames(walk->context, walk->sp, walk->pc, walk->frames, walk->capacity);
    return 1;
}

// Largest stack copy: deeper stacks are unwound as far as the copy goes (frames above it are
// read word by word through perf_read_memory).
#define PERF_STACK_COPY_MAX (512u << 10)

int perf_remote_unwind(int32_t tid, uintptr_t *frames, int capacity, perf_thread_syscall *syscall_out) {
    perf_thread_syscall before, after;
    perf_thread_read_syscall(tid, &before);
    // The calling thread reads itself "blocked" in that very read; it is running.
    if (before.state != PERF_THREAD_GONE && tid == (int32_t)syscall(SYS_gettid)) {
        memset(&before, 0, sizeof before);
        before.state = PERF_THREAD_RUNNING;
        before.nr = -1;
    }
    if (syscall_out != NULL) *syscall_out = before;
    if (before.state != PERF_THREAD_BLOCKED) return -1;
    if (frames == NULL || capacity < 1) return -4;

    uintptr_t sp = (uintptr_t)before.sp, start, end;
    if (!perf_find_mapping(sp, &start, &end)) return -4;
    size_t length = end - sp < PERF_STACK_COPY_MAX ? end - sp : PERF_STACK_COPY_MAX;
    perf_unwind_context *context = malloc(sizeof *context);
    uint8_t *copy = malloc(length);
    if (context == NULL || copy == NULL) {
        free(context);
        free(copy);
        return -4;
    }
    size_t copied = perf_read_memory(sp, copy, length);
    perf_thread_read_syscall(tid, &after);
    int result;
    if (copied < 16) {
        result = -4;
    } else if (after.state != PERF_THREAD_BLOCKED || after.nr != before.nr || after.sp != before.sp ||
               after.pc != before.pc) {
        result = -2;
    } else {
        context->stack = copy;
        context->stack_low = sp;
        context->stack_high = sp + copied;
        perf_walk walk = {context, before.sp, before.pc, frames, capacity, 0};
        dl_iterate_phdr(perf_walk_locked, &walk);
        if (walk.count == 0) {  // no image at all (cannot happen in a running program)
            frames[0] = (uintptr_t)before.pc;
            walk.count = 1;
        }
        result = walk.count;
    }
    free(copy);
    free(context);
    return result;
}

#else  // not x86_64: the syscall file is read, the unwind is not implemented

int perf_remote_unwind(int32_t tid, uintptr_t *frames, int capacity, perf_thread_syscall *syscall_out) {
    (void)frames;
    (void)capacity;
    perf_thread_syscall call;
    perf_thread_read_syscall(tid, &call);
    if (syscall_out != NULL) *syscall_out = call;
    return call.state == PERF_THREAD_BLOCKED ? -3 : -1;
}

#endif

// Remote unwind, part 3 of 4: reading DWARF call frame information from an image's memory.
// A bounds-checked cursor with LEB128 and DW_EH_PE pointer readers, CIE and FDE parsing, and
// the lookup of the FDE covering a pc through .eh_frame_hdr (or a walk of .eh_frame).
#define _GNU_SOURCE
#include "remote_unwind_internal.h"

#include <stdbool.h>
#include <string.h>

#if defined(__x86_64__)

// MARK: - DWARF readers

#define DW_EH_PE_omit 0xff
#define DW_EH_PE_indirect 0x80

uint64_t perf_read_bytes(perf_cursor *cursor, size_t count) {
    if (!cursor->ok || cursor->end - cursor->at < count || cursor->at > cursor->end) {
        cursor->ok = false;
        return 0;
    }
    uint64_t value = 0;
    memcpy(&value, (const void *)cursor->at, count);  // little-endian
    cursor->at += count;
    return value;
}

uint8_t perf_read_u8(perf_cursor *cursor) { return (uint8_t)perf_read_bytes(cursor, 1); }

uint64_t perf_read_uleb(perf_cursor *cursor) {
    uint64_t value = 0;
    for (unsigned shift = 0; cursor->ok; shift += 7) {
        uint8_t byte = perf_read_u8(cursor);
        if (shift < 64) value |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) return value;
        if (shift > 140) cursor->ok = false;  // padded beyond any sense
    }
    return 0;
}

int64_t perf_read_sleb(perf_cursor *cursor) {
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
uintptr_t perf_read_block(perf_cursor *cursor, uint64_t *length_out) {
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
uintptr_t perf_read_encoded(perf_cursor *cursor, uint8_t encoding, uintptr_t data_base,
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
bool perf_find_fde(const perf_unwind_context *context, uint32_t index, uintptr_t pc, perf_fde *fde,
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

#endif

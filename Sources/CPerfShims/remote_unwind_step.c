// Remote unwind, part 4 of 4: one step from a frame to its caller. Runs the FDE's call frame
// program to the row for the pc, evaluates the DWARF expressions CFI uses, and computes the
// caller's registers (with stack scans when a function has no usable CFI).
#define _GNU_SOURCE
#include "remote_unwind_internal.h"

#include <stdbool.h>
#include <string.h>

#if defined(__x86_64__)

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


// Replaces `regs` (a frame at pc = regs->value[16]) with its caller's. `exact`: the pc is an
// interrupted instruction (the system call, or a signal frame's pc) rather than a return
// address, whose call may be the function's last instruction: then look up pc - 1.
// `signal_frame` tells whether this frame is a signal trampoline.
int perf_step(const perf_unwind_context *context, perf_regs *regs, bool exact, bool *signal_frame) {
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

#endif

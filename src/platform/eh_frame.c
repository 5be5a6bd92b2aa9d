/* How to step from a frame to its caller's, read from the DWARF call-frame tables every object
 * carries (.eh_frame, found through .eh_frame_hdr), for the heap profiler's stacks
 * (stack_walk.c): on x86-64 the return address sits just below the frame's CFA, the CFA is
 * rsp or rbp plus a constant, and the caller's rbp is unchanged or saved at a constant offset
 * from the CFA. Compiled code has that shape at its calls, with or without frame pointers,
 * but for rare frames (signal frames, stacks realigned and described by DWARF expressions):
 * those are answered FA_FRAME_UNKNOWN, and the stack ends there.
 *
 * Nothing here allocates or takes a lock but the dynamic linker's, in dl_iterate_phdr: it runs
 * inside malloc. */
#define _GNU_SOURCE
#include <link.h>
#include <string.h>

#include "platform/os.h"

/* x86-64 only: elsewhere the profiler walks stacks with libgcc's unwinder (stack_walk.c). */
#if defined(__x86_64__)

/* DWARF's numbers of the registers that matter (x86-64 psABI). */
enum { REG_RBP = 6, REG_RSP = 7, REG_RA = 16 };

/* ---- reading the tables ---- */

static uint64_t uleb(const uint8_t **p, const uint8_t *end)
{
    uint64_t v = 0;
    for (unsigned shift = 0; *p < end; shift += 7) {
        uint8_t b = *(*p)++;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            break;
    }
    return v;
}

static int64_t sleb(const uint8_t **p, const uint8_t *end)
{
    uint64_t v = 0;
    unsigned shift = 0;
    uint8_t b = 0x80;
    while (*p < end && (b & 0x80)) {
        b = *(*p)++;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
    }
    if (shift < 64 && (b & 0x40))
        v |= ~(uint64_t)0 << shift;
    return (int64_t)v;
}

/* A pointer in encoding `enc` (DW_EH_PE_*): absolute, or relative to where it is stored
 * (pcrel) or to `data` (datarel); false for what the tables of Linux objects do not use. */
static bool encoded(const uint8_t **p, const uint8_t *end, uint8_t enc, uintptr_t data,
                    uintptr_t *out)
{
    const uint8_t *at = *p;
    uint64_t v;
    switch (enc & 0x0f) {
    case 0x00: /* absptr */
    case 0x04: /* udata8 */
    case 0x0c: /* sdata8 */
        if (end - at < 8)
            return false;
        memcpy(&v, at, 8);
        *p += 8;
        break;
    case 0x03: { /* udata4 */
        uint32_t u;
        if (end - at < 4)
            return false;
        memcpy(&u, at, 4);
        v = u;
        *p += 4;
        break;
    }
    case 0x0b: { /* sdata4 */
        int32_t s;
        if (end - at < 4)
            return false;
        memcpy(&s, at, 4);
        v = (uint64_t)(int64_t)s;
        *p += 4;
        break;
    }
    case 0x01: v = uleb(p, end); break;
    case 0x09: v = (uint64_t)sleb(p, end); break;
    default: return false;
    }
    switch (enc & 0x70) {
    case 0x00: break;
    case 0x10: /* pcrel */ v += (uintptr_t)at; break;
    case 0x30: /* datarel */ v += data; break;
    default: return false;
    }
    if (enc & 0x80) /* indirect */
        return false;
    *out = (uintptr_t)v;
    return true;
}

/* ---- the FDE that covers pc, through the object's .eh_frame_hdr ---- */

struct fde_search {
    uintptr_t pc;
    const uint8_t *fde; /* found: its length field */
};

/* The sorted table of .eh_frame_hdr: pairs of (function start, FDE), each 4 bytes from the
 * header's start, the encoding GNU ld and lld write. */
static const uint8_t *fde_in_table(const uint8_t *hdr, uintptr_t pc)
{
    if (hdr[0] != 1 || hdr[3] != 0x3b) /* version 1, datarel | sdata4 */
        return NULL;
    const uint8_t *p = hdr + 4, *end = p + 16;
    uintptr_t frame, count;
    if (!encoded(&p, end, hdr[1], (uintptr_t)hdr, &frame) ||
        !encoded(&p, end, hdr[2], (uintptr_t)hdr, &count) || count == 0)
        return NULL;
    const int32_t *table = (const int32_t *)p;
    size_t low = 0, high = count;
    while (high - low > 1) { /* the last entry whose start is <= pc */
        size_t mid = low + (high - low) / 2;
        if ((uintptr_t)hdr + table[2 * mid] <= pc)
            low = mid;
        else
            high = mid;
    }
    if ((uintptr_t)hdr + table[2 * low] > pc)
        return NULL;
    return hdr + table[2 * low + 1];
}

static int find_fde(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct fde_search *s = arg;
    const ElfW(Phdr) *eh = NULL;
    bool holds = false;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && s->pc - start < ph->p_memsz)
            holds = true;
        else if (ph->p_type == PT_GNU_EH_FRAME)
            eh = ph;
    }
    if (!holds)
        return 0;
    if (eh)
        s->fde = fde_in_table((const uint8_t *)(info->dlpi_addr + eh->p_vaddr), s->pc);
    return 1;
}

/* ---- running the call-frame instructions ---- */

/* The rules that matter at one place of a function. */
struct row {
    int64_t cfa_offset, rbp_offset, ra_offset;
    uint8_t cfa_reg;
    bool rbp_saved, ra_undefined;
};

struct cie {
    uint64_t code_align;
    int64_t data_align;
    uint64_t ra_reg;
    uint8_t fde_enc;
    bool augmented; /* 'z': each FDE has augmentation data, its length first */
    const uint8_t *insns, *end;
};

static bool read_cie(const uint8_t *p, struct cie *cie)
{
    uint32_t length;
    memcpy(&length, p, 4);
    if (length == 0 || length == 0xffffffff) /* none, or the 64-bit format */
        return false;
    const uint8_t *end = p + 4 + length;
    p += 8; /* length and the CIE id */
    uint8_t version = *p++;
    const char *aug = (const char *)p;
    p += strnlen(aug, (size_t)(end - p)) + 1;
    if (version == 4)
        p += 2; /* address and segment sizes */
    cie->code_align = uleb(&p, end);
    cie->data_align = sleb(&p, end);
    cie->ra_reg = version == 1 ? *p++ : uleb(&p, end);
    cie->fde_enc = 0;
    cie->augmented = aug[0] == 'z';
    if (cie->augmented) {
        uint64_t aug_length = uleb(&p, end);
        const uint8_t *data = p;
        for (const char *a = aug + 1; *a; a++) {
            if (*a == 'R')
                cie->fde_enc = *data++;
            else if (*a == 'L')
                data++;
            else if (*a == 'P') {
                uintptr_t personality;
                uint8_t enc = *data++;
                if (!encoded(&data, end, enc & 0x7f, 0, &personality))
                    return false;
            } else /* 'S', a signal frame, or one this reader does not know */
                return false;
        }
        p += aug_length;
    } else if (aug[0]) {
        return false;
    }
    cie->insns = p;
    cie->end = end;
    return p <= end;
}

/* The call-frame instructions (DWARF 5, 6.4.2), by their names there. */
enum {
    DW_CFA_nop = 0x00,
    DW_CFA_advance_loc1 = 0x02,
    DW_CFA_advance_loc2 = 0x03,
    DW_CFA_advance_loc4 = 0x04,
    DW_CFA_offset_extended = 0x05,
    DW_CFA_restore_extended = 0x06,
    DW_CFA_undefined = 0x07,
    DW_CFA_same_value = 0x08,
    DW_CFA_register = 0x09,
    DW_CFA_remember_state = 0x0a,
    DW_CFA_restore_state = 0x0b,
    DW_CFA_def_cfa = 0x0c,
    DW_CFA_def_cfa_register = 0x0d,
    DW_CFA_def_cfa_offset = 0x0e,
    DW_CFA_expression = 0x10,
    DW_CFA_offset_extended_sf = 0x11,
    DW_CFA_def_cfa_sf = 0x12,
    DW_CFA_def_cfa_offset_sf = 0x13,
    DW_CFA_val_offset = 0x14,
    DW_CFA_val_offset_sf = 0x15,
    DW_CFA_val_expression = 0x16,
    DW_CFA_GNU_args_size = 0x2e,
    /* in the top two bits, with an operand in the low six */
    DW_CFA_advance_loc = 0x40,
    DW_CFA_offset = 0x80,
    DW_CFA_restore = 0xc0,
};

#define FA_CFA_STATES 8

static uint64_t fixed(const uint8_t **p, const uint8_t *end, size_t bytes)
{
    uint64_t v = 0;
    if ((size_t)(end - *p) < bytes)
        return 0;
    memcpy(&v, *p, bytes); /* little-endian */
    *p += bytes;
    return v;
}

/* The rule of `reg` in *row becomes "saved at CFA + offset". */
static void saved_at(struct row *row, const struct cie *cie, uint64_t reg, int64_t offset)
{
    if (reg == REG_RBP) {
        row->rbp_saved = true;
        row->rbp_offset = offset;
    } else if (reg == cie->ra_reg) {
        row->ra_undefined = false;
        row->ra_offset = offset;
    }
}

/* The rule of `reg` in *row becomes the CIE's, *initial. */
static void restore(struct row *row, const struct cie *cie, uint64_t reg, const struct row *initial)
{
    if (reg == REG_RBP) {
        row->rbp_saved = initial->rbp_saved;
        row->rbp_offset = initial->rbp_offset;
    } else if (reg == cie->ra_reg) {
        row->ra_undefined = initial->ra_undefined;
        row->ra_offset = initial->ra_offset;
    }
}

/* Run the instructions from p to end on *row, up to the place pc (*loc: the row's place);
 * false on an instruction whose rule for the CFA, rbp or the return address is not a
 * constant offset, or that this reader does not know. `initial`: the CIE's row (NULL while
 * running the CIE's own instructions). */
static bool run(const uint8_t *p, const uint8_t *end, const struct cie *cie, uintptr_t *loc,
                uintptr_t pc, struct row *row, const struct row *initial)
{
    struct row saved[FA_CFA_STATES];
    unsigned depth = 0;
    while (p < end) {
        uint8_t op = *p++;
        uint64_t reg, delta;
        switch (op & 0xc0 ? op & 0xc0 : op) {
        case DW_CFA_advance_loc: delta = op & 0x3f; goto advance;
        case DW_CFA_advance_loc1:
        case DW_CFA_advance_loc2:
        case DW_CFA_advance_loc4:
            delta = fixed(&p, end,
                          op == DW_CFA_advance_loc1   ? 1
                          : op == DW_CFA_advance_loc2 ? 2
                                                      : 4);
            goto advance;
        case DW_CFA_offset:
            saved_at(row, cie, op & 0x3f, (int64_t)uleb(&p, end) * cie->data_align);
            continue;
        case DW_CFA_offset_extended:
            reg = uleb(&p, end);
            saved_at(row, cie, reg, (int64_t)uleb(&p, end) * cie->data_align);
            continue;
        case DW_CFA_offset_extended_sf:
            reg = uleb(&p, end);
            saved_at(row, cie, reg, sleb(&p, end) * cie->data_align);
            continue;
        case DW_CFA_restore:
        case DW_CFA_restore_extended:
            reg = op == DW_CFA_restore_extended ? uleb(&p, end) : (uint64_t)(op & 0x3f);
            if (!initial)
                return false;
            restore(row, cie, reg, initial);
            continue;
        case DW_CFA_undefined:
        case DW_CFA_same_value:
            reg = uleb(&p, end);
            if (reg == REG_RBP)
                row->rbp_saved = false;
            else if (reg == cie->ra_reg)
                row->ra_undefined = op == DW_CFA_undefined;
            continue;
        case DW_CFA_register:
            reg = uleb(&p, end);
            uleb(&p, end);
            if (reg == REG_RBP || reg == cie->ra_reg)
                return false;
            continue;
        case DW_CFA_remember_state:
            if (depth == FA_CFA_STATES)
                return false;
            saved[depth++] = *row;
            continue;
        case DW_CFA_restore_state:
            if (depth == 0)
                return false;
            *row = saved[--depth];
            continue;
        case DW_CFA_def_cfa:
            row->cfa_reg = (uint8_t)uleb(&p, end);
            row->cfa_offset = (int64_t)uleb(&p, end);
            continue;
        case DW_CFA_def_cfa_sf:
            row->cfa_reg = (uint8_t)uleb(&p, end);
            row->cfa_offset = sleb(&p, end) * cie->data_align;
            continue;
        case DW_CFA_def_cfa_register: row->cfa_reg = (uint8_t)uleb(&p, end); continue;
        case DW_CFA_def_cfa_offset: row->cfa_offset = (int64_t)uleb(&p, end); continue;
        case DW_CFA_def_cfa_offset_sf: row->cfa_offset = sleb(&p, end) * cie->data_align; continue;
        case DW_CFA_expression:
        case DW_CFA_val_expression: {
            reg = uleb(&p, end);
            uint64_t length = uleb(&p, end);
            if (reg == REG_RBP || reg == cie->ra_reg || length > (uint64_t)(end - p))
                return false;
            p += length;
            continue;
        }
        case DW_CFA_val_offset:
        case DW_CFA_val_offset_sf:
            reg = uleb(&p, end);
            uleb(&p, end); /* an sleb is skipped the same way */
            if (reg == REG_RBP || reg == cie->ra_reg)
                return false;
            continue;
        case DW_CFA_GNU_args_size: uleb(&p, end); continue;
        case DW_CFA_nop: continue;
        default: /* set_loc, def_cfa_expression, and what this reader does not know */ return false;
        }
    advance:
        /* The rows from here on describe places past pc. */
        *loc += delta * cie->code_align;
        if (*loc > pc)
            return true;
    }
    return true;
}

struct fa_os_frame_step _fa_os_frame_step(uintptr_t ip)
{
    struct fa_os_frame_step unknown = {.kind = FA_FRAME_UNKNOWN};
    /* A return address is the instruction after the call: the call is one byte back. */
    struct fde_search s = {ip - 1, NULL};
    dl_iterate_phdr(find_fde, &s);
    if (!s.fde)
        return unknown;
    const uint8_t *fde = s.fde;
    uint32_t length, cie_offset;
    memcpy(&length, fde, 4);
    memcpy(&cie_offset, fde + 4, 4);
    if (length == 0 || length == 0xffffffff || cie_offset == 0)
        return unknown;
    const uint8_t *end = fde + 4 + length, *p = fde + 8;
    struct cie cie;
    if (!read_cie(fde + 4 - cie_offset, &cie))
        return unknown;
    uintptr_t start, range;
    if (!encoded(&p, end, cie.fde_enc, 0, &start) ||
        !encoded(&p, end, cie.fde_enc & 0x0f, 0, &range) || s.pc - start >= range)
        return unknown;
    if (cie.augmented)
        p += uleb(&p, end);
    struct row row = {0, 0, 0, REG_RSP, false, true}, initial;
    uintptr_t loc = start;
    if (!run(cie.insns, cie.end, &cie, &loc, s.pc, &row, NULL))
        return unknown;
    initial = row;
    loc = start;
    if (!run(p, end, &cie, &loc, s.pc, &row, &initial))
        return unknown;
    if (row.ra_undefined)
        return (struct fa_os_frame_step){.kind = FA_FRAME_LAST};
    if ((row.cfa_reg != REG_RSP && row.cfa_reg != REG_RBP) || row.ra_offset != -8 ||
        row.cfa_offset < 8 || row.cfa_offset > INT32_MAX || row.rbp_offset < INT16_MIN ||
        row.rbp_offset > INT16_MAX)
        return unknown;
    return (struct fa_os_frame_step){.cfa_offset = (int32_t)row.cfa_offset,
                                     .rbp_offset = (int16_t)row.rbp_offset,
                                     .kind = FA_FRAME_STEP,
                                     .cfa_on_rbp = row.cfa_reg == REG_RBP,
                                     .rbp_saved = row.rbp_saved};
}

#endif

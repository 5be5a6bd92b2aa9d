/* How to step from a frame to its caller's, read from the DWARF call-frame tables every object
 * carries (.eh_frame, found through .eh_frame_hdr), for the heap profiler's stacks
 * (stack_walk.c): on x86-64 the return address sits just below the frame's CFA, the CFA is
 * rsp or rbp plus a constant, and the caller's rbp is unchanged or saved at a constant offset
 * from the CFA. Compiled code has that shape at its calls, with or without frame pointers,
 * but for rare frames (signal frames, stacks realigned and described by DWARF expressions):
 * those are answered FA_FRAME_UNKNOWN, and the stack ends there.
 *
 * The tables are read from the object's file (pread) when it is the one mapped, its build id
 * the same: read through the mapping instead, each page would bring the kernel's fault-around
 * of up to 64 KiB of them into the process's memory, 110 KiB and more of a small program's
 * (docs/decisions/096-profile-cost-cut.md). Otherwise, through the mapping.
 *
 * Nothing here allocates or takes a lock but the dynamic linker's, in dl_iterate_phdr: it runs
 * inside malloc. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "platform/keep_errno.h"

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
 * (pcrel: at *p + `moved`, the address in the object of bytes copied out of it) or to `data`
 * (datarel); false for what the tables of Linux objects do not use. */
static bool encoded(const uint8_t **p, const uint8_t *end, uint8_t enc, uintptr_t data,
                    uintptr_t moved, uintptr_t *out)
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
    case 0x10: /* pcrel */ v += (uintptr_t)at + moved; break;
    case 0x30: /* datarel */ v += data; break;
    default: return false;
    }
    if (enc & 0x80) /* indirect */
        return false;
    *out = (uintptr_t)v;
    return true;
}

/* ---- an object's bytes, from its file or its mapping ---- */

struct object {
    const struct dl_phdr_info *info;
    int fd; /* -1: read through the mapping */
};

/* len bytes of the object at address `at` into buf. */
static bool object_read(const struct object *o, uintptr_t at, void *buf, size_t len)
{
    if (o->fd < 0) {
        memcpy(buf, (const void *)at, len);
        return true;
    }
    uintptr_t vaddr = at - o->info->dlpi_addr;
    for (int i = 0; i < o->info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &o->info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || vaddr - ph->p_vaddr >= ph->p_filesz ||
            len > ph->p_filesz - (vaddr - ph->p_vaddr))
            continue;
        long n = syscall(SYS_pread64, o->fd, buf, len, (long)(ph->p_offset + vaddr - ph->p_vaddr));
        return n == (long)len;
    }
    return false;
}

/* The object's file, if it is the one mapped: its notes (the build id) as in memory. The notes
 * sit in the object's first page, which the dynamic linker has read already. */
#define FA_NOTES_MAX 256
static int object_file(const struct dl_phdr_info *info)
{
    const ElfW(Phdr) *note = NULL;
    for (int i = 0; i < info->dlpi_phnum && !note; i++)
        if (info->dlpi_phdr[i].p_type == PT_NOTE)
            note = &info->dlpi_phdr[i];
    const char *path = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "/proc/self/exe";
    if (!note || note->p_filesz == 0 || path[0] != '/')
        return -1;
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    uint8_t notes[FA_NOTES_MAX];
    size_t len = note->p_filesz < sizeof notes ? note->p_filesz : sizeof notes;
    if (syscall(SYS_pread64, fd, notes, len, (long)note->p_offset) != (long)len ||
        memcmp(notes, (const void *)(info->dlpi_addr + note->p_vaddr), len) != 0) {
        syscall(SYS_close, fd);
        return -1;
    }
    return fd;
}

/* ---- the FDE that covers pc, through the object's .eh_frame_hdr ---- */

/* The sorted table of .eh_frame_hdr: pairs of (function start, FDE), each 4 bytes from the
 * header's start, the encoding GNU ld and lld write; read in pieces of FA_HDR_PIECE pairs. */
#define FA_HDR_PIECE 32
static uintptr_t fde_in_table(const struct object *o, uintptr_t hdr, uintptr_t pc)
{
    uint8_t head[16];
    if (!object_read(o, hdr, head, 4) || head[0] != 1 || head[3] != 0x3b)
        return 0; /* version 1, datarel | sdata4 */
    size_t head_len = 4 + ((head[1] & 0x0f) == 0x03 || (head[1] & 0x0f) == 0x0b ? 4 : 8) +
                      ((head[2] & 0x0f) == 0x03 || (head[2] & 0x0f) == 0x0b ? 4 : 8);
    if (!object_read(o, hdr, head, head_len))
        return 0;
    const uint8_t *p = head + 4, *end = head + head_len;
    uintptr_t frame, count;
    if (!encoded(&p, end, head[1], hdr, hdr - (uintptr_t)head, &frame) ||
        !encoded(&p, end, head[2], hdr, hdr - (uintptr_t)head, &count) || count == 0)
        return 0;
    uintptr_t table = hdr + head_len;
    int32_t piece[2 * FA_HDR_PIECE];
    size_t low = 0, high = count; /* the last entry whose start is <= pc lies in [low, high) */
    for (;;) {
        if (high - low <= FA_HDR_PIECE) {
            if (!object_read(o, table + 8 * low, piece, 8 * (high - low)))
                return 0;
            size_t i = high - low;
            while (i > 0 && hdr + (uintptr_t)(intptr_t)piece[2 * (i - 1)] > pc)
                i--;
            return i ? hdr + (uintptr_t)(intptr_t)piece[2 * (i - 1) + 1] : 0;
        }
        size_t mid = low + (high - low) / 2;
        if (!object_read(o, table + 8 * mid, piece, 4))
            return 0;
        if (hdr + (uintptr_t)(intptr_t)piece[0] <= pc)
            low = mid;
        else
            high = mid;
    }
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
                if (!encoded(&data, end, enc & 0x7f, 0, 0, &personality))
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

/* The most bytes of an FDE or a CIE read from the file; longer ones are read through the
 * mapping (libc's longest FDE is 192 bytes, libstdc++'s 756, a CIE 20-28). */
#define FA_FDE_MAX 512
#define FA_CIE_MAX 64

/* The entry (CIE or FDE) at `at`: copied into buf (of `max` bytes) when it fits, else where
 * it is mapped; *moved: its address in the object less the returned one. NULL if it cannot be
 * read. */
static const uint8_t *entry(const struct object *o, uintptr_t at, uint8_t *buf, size_t max,
                            uintptr_t *moved)
{
    uint32_t length;
    if (!object_read(o, at, &length, 4) || length == 0 || length == 0xffffffff)
        return NULL; /* none, or the 64-bit format */
    const uint8_t *p = (const uint8_t *)at;
    if (o->fd >= 0 && length <= max - 4) {
        if (!object_read(o, at, buf, length + 4))
            return NULL;
        p = buf;
    }
    *moved = at - (uintptr_t)p;
    return p;
}

static struct fa_os_frame_step step_in(const struct object *o, uintptr_t hdr, uintptr_t pc)
{
    struct fa_os_frame_step unknown = {.kind = FA_FRAME_UNKNOWN};
    uint8_t fde_buf[FA_FDE_MAX], cie_buf[FA_CIE_MAX];
    uintptr_t fde_at = fde_in_table(o, hdr, pc), moved, cie_moved;
    const uint8_t *fde = fde_at ? entry(o, fde_at, fde_buf, sizeof fde_buf, &moved) : NULL;
    if (!fde)
        return unknown;
    uint32_t length, cie_offset;
    memcpy(&length, fde, 4);
    memcpy(&cie_offset, fde + 4, 4);
    if (cie_offset == 0)
        return unknown;
    const uint8_t *end = fde + 4 + length, *p = fde + 8;
    const uint8_t *cie_bytes =
        entry(o, fde_at + 4 - cie_offset, cie_buf, sizeof cie_buf, &cie_moved);
    struct cie cie;
    if (!cie_bytes || !read_cie(cie_bytes, &cie))
        return unknown;
    uintptr_t start, range;
    if (!encoded(&p, end, cie.fde_enc, 0, moved, &start) ||
        !encoded(&p, end, cie.fde_enc & 0x0f, 0, 0, &range) || pc - start >= range)
        return unknown;
    if (cie.augmented)
        p += uleb(&p, end);
    struct row row = {0, 0, 0, REG_RSP, false, true}, initial;
    uintptr_t loc = start;
    if (!run(cie.insns, cie.end, &cie, &loc, pc, &row, NULL))
        return unknown;
    initial = row;
    loc = start;
    if (!run(p, end, &cie, &loc, pc, &row, &initial))
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

struct step_search {
    uintptr_t pc;
    struct fa_os_frame_step step;
};

/* The object that holds pc: its step read there, under the dynamic linker's lock, so that the
 * object stays loaded meanwhile. */
static int step_in_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct step_search *s = arg;
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
    if (eh) {
        struct object o = {info, object_file(info)};
        s->step = step_in(&o, info->dlpi_addr + eh->p_vaddr, s->pc);
        if (o.fd >= 0)
            syscall(SYS_close, o.fd);
    }
    return 1;
}

struct fa_os_frame_step _fa_os_frame_step(uintptr_t ip)
{
    FA_KEEP_ERRNO;
    /* A return address is the instruction after the call: the call is one byte back. */
    struct step_search s = {ip - 1, {.kind = FA_FRAME_UNKNOWN}};
    dl_iterate_phdr(step_in_object, &s);
    return s.step;
}

#endif

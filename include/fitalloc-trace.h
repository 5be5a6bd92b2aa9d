/* The trace file format of FITALLOC_TRACE=path, version 2 (docs/trace.md): what a traced program
 * wrote, for tools that read it (fitalloc-replay, the fitalloc command, your own). This header
 * describes the format exactly and decodes it: fa_trace_decode below reads one record.
 *
 *   | header (64 bytes) | block | block | ... | (a last block cut short: read up to its last
 *                                                 complete record, unchecked)
 *   block: | block header (48 bytes) | `bytes` bytes: `records` records of variable length |
 *
 * All fixed-size fields are in the byte order of the machine that wrote the trace; a reader on
 * a machine of the other order sees a wrong version and refuses the file. Each block holds
 * records of one thread, in the order the thread made them; blocks appear in the order the
 * threads' buffers were written. A record's time_ns orders the calls of the whole process:
 * sort by (time_ns, thread) for the program order (docs/trace.md, "Order"); a thread's times
 * only grow. A thread's records are numbered from 0 in the file (the block header's `index`):
 * a number missing is a call of a buffer that was never written (a crash).
 *
 * A record: a kind byte, then the fields its kind says are there, in this order:
 *
 *   kind        bits 0-3: the op (enum fa_trace_op, 1-9); bits 4-7: FA_TRACE_F_* below
 *   time        varint d, if FA_TRACE_F_TIME: time_ns = previous time_ns + 1 + d (without: + 1)
 *   align_log2  one byte (1-63), if FA_TRACE_F_ALIGN (without it: 0)
 *   size        varint, if FA_TRACE_F_SIZE (without it: 0)
 *   in          pointer field, for realloc, free, delete and delete[] (the others: in = 0)
 *   out         pointer field, for malloc, calloc, realloc, aligned, new and new[] (others: 0)
 *
 * A varint is an unsigned LEB128 number: 7 bits a byte, least significant first, the high bit
 * set on every byte but the last; at most 10 bytes. A pointer field is a varint z, the zigzag
 * form of a signed difference: delta = (z >> 1) ^ -(z & 1), times 16 (or times 1 with
 * FA_TRACE_F_BYTES), and the pointer is the previous pointer + delta. "Previous" is the state
 * of the decoder, struct fa_trace_state: the previous record of the block (its time_ns, and
 * the last pointer field that was not 0, in or out, in any earlier record or earlier in this
 * one); for the first record of a block, the block header's fields. Sums are modulo 2^64.
 */
#ifndef FITALLOC_TRACE_H
#define FITALLOC_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FA_TRACE_MAGIC "FATRACE" /* 7 characters and a NUL: the header's first 8 bytes */
#define FA_TRACE_VERSION 2

struct fa_trace_header {
    char magic[8];              /* FA_TRACE_MAGIC */
    uint32_t version;           /* FA_TRACE_VERSION */
    uint32_t header_size;       /* sizeof(struct fa_trace_header): the first block starts here */
    uint32_t block_header_size; /* sizeof(struct fa_trace_block) */
    uint32_t pid;               /* the process that wrote the file */
    uint32_t parent_pid;        /* a fork child's file (path.PID): the parent's pid; else 0 */
    uint32_t mode;              /* 0: the fast engine, 1: the lab (FITALLOC_MODE=lab) */
    uint64_t start_ns;          /* CLOCK_MONOTONIC when tracing started; times count from it */
    uint32_t clock_period;      /* a thread reads the clock at least every this many calls */
    uint32_t reserved32;        /* 0 */
    uint64_t reserved[2];       /* 0 */
};

#define FA_TRACE_BLOCK_TAG 0x324b4c42u /* "BLK2" in a little-endian file */

struct fa_trace_block {
    uint32_t tag;      /* FA_TRACE_BLOCK_TAG */
    uint32_t thread;   /* threads numbered from 0 in the order of their first call */
    uint32_t records;  /* how many records follow */
    uint32_t bytes;    /* their length: the next block starts after them */
    uint64_t index;    /* the thread's records in the file before this block's first */
    uint64_t time_ns;  /* the decoder's state before the first record (struct fa_trace_state): */
    uint64_t pointer;  /*   the thread's previous time_ns and last pointer that was not 0 (0, 0 */
                       /*   before a thread's first record) */
    uint64_t checksum; /* fa_trace_block_checksum: a torn or damaged block fails it */
};

enum fa_trace_op {
    FA_TRACE_MALLOC = 1,       /* malloc; size */
    FA_TRACE_CALLOC = 2,       /* calloc; size = count x size */
    FA_TRACE_REALLOC = 3,      /* realloc and reallocarray; in, size, out (0: failed) */
    FA_TRACE_ALIGNED = 4,      /* aligned_alloc, posix_memalign, memalign, valloc, pvalloc */
    FA_TRACE_FREE = 5,         /* free, free_sized, free_aligned_sized; in, size if given */
    FA_TRACE_NEW = 6,          /* operator new (every form; align_log2 for the aligned ones) */
    FA_TRACE_NEW_ARRAY = 7,    /* operator new[] */
    FA_TRACE_DELETE = 8,       /* operator delete (every form; size if sized) */
    FA_TRACE_DELETE_ARRAY = 9, /* operator delete[] */
};
#define FA_TRACE_OP_MAX 9

/* The bits of a kind byte above the op. */
#define FA_TRACE_F_TIME 0x10u  /* a time varint follows */
#define FA_TRACE_F_SIZE 0x20u  /* a size varint follows */
#define FA_TRACE_F_ALIGN 0x40u /* an align_log2 byte follows */
#define FA_TRACE_F_BYTES 0x80u /* pointer deltas count bytes, not 16-byte units */
/* The longest record: kind, time, align, size and 2 pointer fields (varints of 10 bytes). */
#define FA_TRACE_RECORD_MAX 42

/* Which pointer fields an op's record has: realloc has both. */
static inline int fa_trace_op_has_in(unsigned op)
{
    return op == FA_TRACE_REALLOC || op == FA_TRACE_FREE || op == FA_TRACE_DELETE ||
           op == FA_TRACE_DELETE_ARRAY;
}
static inline int fa_trace_op_has_out(unsigned op)
{
    return op >= FA_TRACE_MALLOC && op <= FA_TRACE_OP_MAX && op != FA_TRACE_FREE &&
           op != FA_TRACE_DELETE && op != FA_TRACE_DELETE_ARRAY;
}

/* A record as a reader holds it once decoded (not its layout in the file). */
struct fa_trace_record {
    uint64_t seq;       /* its place in the program order (by time_ns, thread), from 0: given by
                           the reader once it has them all (fa_trace_decode leaves it alone) */
    uint64_t time_ns;   /* since the header's start_ns (docs/trace.md, "Order": how precise) */
    uint64_t size;      /* bytes asked for (a free: the size a sized free gave, else 0) */
    uint64_t in;        /* the pointer passed in (free, realloc), else 0 */
    uint64_t out;       /* the pointer returned (0: failed, or a free) */
    uint32_t thread;    /* the block's thread */
    uint8_t op;         /* enum fa_trace_op */
    uint8_t align_log2; /* the alignment asked for, as a power of two (0: the default) */
    uint8_t unused[2];
};

/* What the next record's fields are deltas from. */
struct fa_trace_state {
    uint64_t time_ns, pointer;
};

static inline struct fa_trace_state fa_trace_block_state(const struct fa_trace_block *b)
{
    struct fa_trace_state s = {b->time_ns, b->pointer};
    return s;
}

/* ---- decoding ---- */

enum fa_trace_decode_result {
    FA_TRACE_DECODED = 0,
    FA_TRACE_CUT = 1,        /* the record goes on past `end` */
    FA_TRACE_BAD_OP = 2,     /* the kind's op is not 1-9 */
    FA_TRACE_BAD_VARINT = 3, /* a varint longer than 10 bytes, or above 2^64 - 1 */
    FA_TRACE_BAD_ALIGN = 4,  /* an align_log2 byte of 0 or above 63 */
};

static inline int fa_trace_get_varint(const uint8_t **at, const uint8_t *end, uint64_t *value)
{
    const uint8_t *p = *at;
    uint64_t v = 0;
    for (unsigned shift = 0; shift <= 63; shift += 7) {
        if (p == end)
            return FA_TRACE_CUT;
        uint8_t byte = *p++;
        if (shift == 63 && byte > 1)
            return FA_TRACE_BAD_VARINT;
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *at = p;
            *value = v;
            return FA_TRACE_DECODED;
        }
    }
    return FA_TRACE_BAD_VARINT;
}

static inline int fa_trace_get_pointer(const uint8_t **at, const uint8_t *end, unsigned unit_log2,
                                       struct fa_trace_state *s, uint64_t *pointer)
{
    uint64_t z;
    int rc = fa_trace_get_varint(at, end, &z);
    if (rc != FA_TRACE_DECODED)
        return rc;
    *pointer = s->pointer + (((z >> 1) ^ (0 - (z & 1))) << unit_log2);
    if (*pointer)
        s->pointer = *pointer;
    return FA_TRACE_DECODED;
}

/* Decode the record at *at (the block's bytes end at `end`) into r (all but r->seq and
 * r->thread) and advance *at and s past it. Anything but FA_TRACE_DECODED leaves *at and s as
 * they were. */
static inline int fa_trace_decode(struct fa_trace_state *s, const uint8_t **at, const uint8_t *end,
                                  struct fa_trace_record *r)
{
    const uint8_t *p = *at;
    struct fa_trace_state next = *s;
    if (p == end)
        return FA_TRACE_CUT;
    unsigned kind = *p++, op = kind & 15;
    if (op < 1 || op > FA_TRACE_OP_MAX)
        return FA_TRACE_BAD_OP;
    uint64_t d = 0;
    int rc;
    if ((kind & FA_TRACE_F_TIME) && (rc = fa_trace_get_varint(&p, end, &d)) != FA_TRACE_DECODED)
        return rc;
    next.time_ns += 1 + d;
    r->align_log2 = 0;
    if (kind & FA_TRACE_F_ALIGN) {
        if (p == end)
            return FA_TRACE_CUT;
        if (*p < 1 || *p > 63)
            return FA_TRACE_BAD_ALIGN;
        r->align_log2 = *p++;
    }
    r->size = 0;
    if ((kind & FA_TRACE_F_SIZE) &&
        (rc = fa_trace_get_varint(&p, end, &r->size)) != FA_TRACE_DECODED)
        return rc;
    unsigned unit_log2 = (kind & FA_TRACE_F_BYTES) ? 0 : 4;
    r->in = r->out = 0;
    if (fa_trace_op_has_in(op) &&
        (rc = fa_trace_get_pointer(&p, end, unit_log2, &next, &r->in)) != FA_TRACE_DECODED)
        return rc;
    if (fa_trace_op_has_out(op) &&
        (rc = fa_trace_get_pointer(&p, end, unit_log2, &next, &r->out)) != FA_TRACE_DECODED)
        return rc;
    r->time_ns = next.time_ns;
    r->op = (uint8_t)op;
    r->unused[0] = r->unused[1] = 0;
    *s = next;
    *at = p;
    return FA_TRACE_DECODED;
}

/* ---- the block checksum ---- */

/* The 8-byte words of the data (in the file's byte order, the last one completed with zero
 * bytes), each folded in as h = (h ^ word) * FA_TRACE_CHECKSUM_MULTIPLIER modulo 2^64. */
#define FA_TRACE_CHECKSUM_SEED 0x4641545241434532ull /* "2ECARTAF" */
#define FA_TRACE_CHECKSUM_MULTIPLIER 0x9e3779b97f4a7c15ull
static inline uint64_t fa_trace_checksum_add(uint64_t h, const void *data, size_t n)
{
    const uint8_t *p = (const uint8_t *)data;
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        h = (h ^ word) * FA_TRACE_CHECKSUM_MULTIPLIER;
    }
    if (n) {
        uint64_t word = 0;
        memcpy(&word, p, n);
        h = (h ^ word) * FA_TRACE_CHECKSUM_MULTIPLIER;
    }
    return h;
}

/* A block's checksum: over its header with `checksum` 0, then its b->bytes of records. */
static inline uint64_t fa_trace_block_checksum(const struct fa_trace_block *b, const void *records)
{
    struct fa_trace_block head = *b;
    head.checksum = 0;
    uint64_t h = fa_trace_checksum_add(FA_TRACE_CHECKSUM_SEED, &head, sizeof head);
    return fa_trace_checksum_add(h, records, b->bytes);
}

/* A writer's header before its own fields (pid, clock, mode, ...): zeros, the magic, the
 * version and the sizes. */
static inline struct fa_trace_header fa_trace_header_start(void)
{
    struct fa_trace_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, FA_TRACE_MAGIC, sizeof h.magic);
    h.version = FA_TRACE_VERSION;
    h.header_size = sizeof h;
    h.block_header_size = sizeof(struct fa_trace_block);
    return h;
}

#ifdef __cplusplus
static_assert(sizeof(struct fa_trace_header) == 64, "trace header layout");
static_assert(sizeof(struct fa_trace_block) == 48, "trace block header layout");
#else
_Static_assert(sizeof(struct fa_trace_header) == 64, "trace header layout");
_Static_assert(sizeof(struct fa_trace_block) == 48, "trace block header layout");
#endif

#endif

/* The trace file format of FITALLOC_TRACE=path (docs/trace.md): what a traced program wrote,
 * for tools that read it (fitalloc-replay, the fitalloc command, your own).
 *
 *   | header (64 bytes) | record (48 bytes) | record | ... | (a partial record: ignored)
 *
 * All fields are in the byte order of the machine that wrote the trace; a reader on a machine
 * of the other order sees a wrong magic and refuses the file. Records appear in the order the
 * threads' buffers were written, not in program order: `seq` gives the program order (one
 * counter for the whole process), so a reader sorts by it. A trace cut short (a crash, a
 * killed program) is still read up to its last complete record; numbers missing from `seq`
 * are the events of buffers that were never written.
 */
#ifndef FITALLOC_TRACE_H
#define FITALLOC_TRACE_H

#include <stdint.h>

#define FA_TRACE_MAGIC "FATRACE" /* 7 characters and a NUL: the header's first 8 bytes */
#define FA_TRACE_VERSION 1

struct fa_trace_header {
    char magic[8];        /* FA_TRACE_MAGIC */
    uint32_t version;     /* FA_TRACE_VERSION */
    uint32_t header_size; /* sizeof(struct fa_trace_header): a reader skips this many bytes */
    uint32_t record_size; /* sizeof(struct fa_trace_record) */
    uint32_t pid;         /* the process that wrote the file */
    uint32_t parent_pid;  /* a fork child's file (path.PID): the parent's pid; else 0 */
    uint32_t mode;        /* 0: the fast engine, 1: the lab (FITALLOC_MODE=lab) */
    uint64_t start_ns;    /* CLOCK_MONOTONIC when tracing started; record times count from it */
    uint64_t reserved[3]; /* 0 */
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

struct fa_trace_record {
    uint64_t seq;       /* program order across all threads, from 0 */
    uint64_t time_ns;   /* since the header's start_ns */
    uint64_t size;      /* bytes asked for (a free: the size a sized free gave, else 0) */
    uint64_t in;        /* the pointer passed in (free, realloc), else 0 */
    uint64_t out;       /* the pointer returned (0: failed, or a free) */
    uint32_t thread;    /* threads numbered from 0 in the order of their first event */
    uint8_t op;         /* enum fa_trace_op */
    uint8_t align_log2; /* the alignment asked for, as a power of two (0: the default) */
    uint8_t flags;      /* 0 */
    uint8_t check;      /* fa_trace_check(record): a torn or overwritten record fails it */
};

/* FA_TRACE_CHECK_SEED xor-ed with the record's other 47 bytes. */
#define FA_TRACE_CHECK_SEED 0xa5
static inline uint8_t fa_trace_check(const struct fa_trace_record *r)
{
    const uint8_t *b = (const uint8_t *)r;
    uint8_t x = FA_TRACE_CHECK_SEED;
    for (unsigned i = 0; i < sizeof *r - 1; i++)
        x ^= b[i];
    return x;
}

#ifdef __cplusplus
static_assert(sizeof(struct fa_trace_header) == 64, "trace header layout");
static_assert(sizeof(struct fa_trace_record) == 48, "trace record layout");
#else
_Static_assert(sizeof(struct fa_trace_header) == 64, "trace header layout");
_Static_assert(sizeof(struct fa_trace_record) == 48, "trace record layout");
#endif

#endif

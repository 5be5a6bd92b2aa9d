/* fitalloc statistics: a versioned snapshot a program can read at any time.
 *
 * Counters are summed over all threads; a snapshot taken while other threads
 * allocate is approximate (each counter is exact at some moment, not all at
 * the same moment). At exit, FITALLOC_STATS=1 prints the same figures.
 */
#ifndef FITALLOC_STATS_H
#define FITALLOC_STATS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FA_STATS_VERSION 1
/* Number of size classes reported in fa_stats.size_class (unused tail entries are zero). */
#define FA_STATS_CLASSES 96

/* One size class: blocks of exactly block_size bytes. */
struct fa_stats_class {
    uint64_t block_size; /* bytes per block of this class */
    uint64_t allocs;     /* blocks handed out since start */
    uint64_t frees;      /* blocks given back since start */
    uint64_t live;       /* allocs - frees */
};

struct fa_stats {
    uint32_t size;         /* sizeof(struct fa_stats) of the caller: set before calling */
    uint32_t version;      /* FA_STATS_VERSION of the library that filled it */
    uint64_t allocs;       /* all allocations: size classes and large blocks */
    uint64_t frees;        /* all frees */
    uint64_t bytes_in_use; /* bytes in live blocks (block sizes, not requests) */
    uint64_t large_allocs; /* allocations above the largest size class */
    uint64_t large_frees;
    uint64_t large_in_use;   /* bytes in live large blocks */
    uint64_t reserved;       /* address space mapped from the OS now */
    uint64_t committed;      /* bytes of it that may hold memory (not yet purged) */
    uint64_t peak_committed; /* highest committed seen */
    uint64_t purged;         /* bytes handed back to the OS with madvise/munmap since start */
    uint64_t segments;       /* segments mapped now */
    uint64_t threads;        /* thread heaps created since start */
    uint64_t abandoned;      /* segments of exited threads waiting for a new owner */
    struct fa_stats_class size_class[FA_STATS_CLASSES];
};

/* Fill *out (out->size must be set to sizeof *out); returns 0, or -1 if out->size is too small. */
int fa_stats_get(struct fa_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* FITALLOC_STATS_H */

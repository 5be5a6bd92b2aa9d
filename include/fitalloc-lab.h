/* fitalloc policy lab: the classic statistics of the lab engine (FITALLOC_MODE=lab).
 *
 * The lab runs a classic free-list heap (boundary tags, splitting, coalescing) under a placement
 * policy (FITALLOC_POLICY) and a thread-safety strategy (FITALLOC_LOCK). Its counters follow the
 * definitions of the classic studies (docs/lab.md). A program that wants to read them without
 * depending on fitalloc can declare fa_lab_stats_get weak and test it for NULL.
 */
#ifndef FITALLOC_LAB_H
#define FITALLOC_LAB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FA_LAB_STATS_VERSION 2
/* Size classes of the statistics: class k holds the blocks of [2^k, 2^(k+1)) bytes, header
 * included (the buddy system's orders; TLSF's first levels). */
#define FA_LAB_SIZE_CLASSES 48

struct fa_lab_stats {
    uint32_t size;    /* sizeof(struct fa_lab_stats) of the caller: set before calling */
    uint32_t version; /* FA_LAB_STATS_VERSION of the library that filled it */
    /* The CSE3320 set */
    uint64_t mallocs;   /* successful allocations (malloc, calloc, realloc that moved, ...) */
    uint64_t frees;     /* successful frees */
    uint64_t reuses;    /* allocations served by an existing free block */
    uint64_t grows;     /* times a heap asked the OS for more memory for a new block */
    uint64_t splits;    /* free blocks split in two */
    uint64_t coalesces; /* merges of two neighbouring blocks (on free, or realloc growing into
                           a free neighbour) */
    uint64_t blocks;    /* blocks in the heaps now, free and used */
    uint64_t requested; /* sum of the sizes asked for (raw, unaligned) */
    uint64_t max_heap;  /* largest total heap size seen (block payloads, headers excluded) */
    /* The ID1206 set */
    uint64_t free_blocks;  /* free-list length */
    uint64_t free_bytes;   /* total free space (payload bytes of free blocks) */
    uint64_t largest_free; /* payload bytes of the largest free block */
    /* The ECE650 set */
    uint64_t heap_bytes;              /* bytes obtained from the OS for the heaps, headers included
                             (their "data segment size") */
    uint64_t free_space_with_headers; /* free payload + headers of free blocks (ECE650 old kit) */
    double frag_free_over_heap;       /* free_space_with_headers / heap_bytes */
    double frag_largest_over_free;    /* 1 - largest_free / free_bytes (0 when nothing is free) */
    /* Large requests sent straight to the OS (FITALLOC_LAB_DIRECT) */
    uint64_t direct_allocs;
    uint64_t direct_frees;
    uint64_t direct_bytes; /* bytes mapped for them now */
    /* Locks (global and arenas modes) */
    uint64_t lock_acquisitions;
    uint64_t lock_contended; /* acquisitions that found the lock taken */
    uint64_t futex_waits;
    uint64_t futex_wakes;
    uint64_t heaps; /* lab heaps in use (1, threads, or arenas) */
    /* Internal fragmentation (version 2): what the counted mallocs were granted against what
     * they requested */
    uint64_t granted;                   /* sum of the usable sizes of the counted mallocs */
    double frag_granted_over_requested; /* granted / requested (1: no waste; 0 when nothing) */
    struct {
        uint64_t mallocs, requested, granted;
    } size_classes[FA_LAB_SIZE_CLASSES]; /* the same by the granted block's size class */
};

/* Fill *out (out->size set by the caller); 0, or -1 if not in lab mode or out->size too small. */
int fa_lab_stats_get(struct fa_lab_stats *out);
/* Write the free-block size histogram ("size count" per line) to path; 0, or -1 on error. */
int fa_lab_hist_write(const char *path);
/* Check every lab heap's invariants; 0 if they hold (a broken invariant aborts with a message). */
int fa_lab_check(void);

/* One block met by fa_lab_walk. */
struct fa_lab_block {
    int heap;    /* the lab heap's number (0, 1, ...), or -1 for a direct mapping */
    int used;    /* 1: allocated, 0: free */
    void *start; /* the block's first byte: its 16-byte header (a direct mapping has none) */
    /* The whole block, header included: a heap's blocks tile it, their sizes adding up to its
     * heap bytes (fa_lab_stats.heap_bytes); a direct mapping's size (a multiple of 4096). */
    size_t size;
    void *payload;       /* the pointer malloc returned (start + 16; a direct mapping: start) */
    size_t payload_size; /* bytes usable from payload (what malloc_usable_size says) */
};

/* Called by fa_lab_walk for every block. It runs while the walk holds the lab's locks: it must
 * not call malloc, free or any other allocation function, nor anything of fitalloc (that would
 * deadlock or change the heap under the walk). Collect into memory set aside beforehand. */
typedef void (*fa_lab_walk_fn)(const struct fa_lab_block *block, void *arg);

/* Visit every block of the lab heaps that can be walked now, heap by heap and in address order
 * within a heap, then the direct mappings (FITALLOC_LAB_DIRECT) as used blocks in no
 * particular order; arg is passed to fn unchanged. Which heaps are walked depends on
 * FITALLOC_LOCK:
 *   global, arenas: every heap, each under its lock (threads using it wait meanwhile);
 *   thread: the calling thread's heap and those of exited threads waiting for a new thread.
 *           The heap of another live thread changes without any lock, so it is skipped (its
 *           counters still show in fa_lab_stats_get); walk from each thread, or after joining
 *           the others, to see everything.
 * Returns the number of heaps walked (direct mappings not counted; 0 before the first
 * allocation), or -1 if the lab is not active (FITALLOC_MODE is not lab) or fn is NULL. */
int fa_lab_walk(fa_lab_walk_fn fn, void *arg);

#ifdef __cplusplus
}
#endif

#endif /* FITALLOC_LAB_H */

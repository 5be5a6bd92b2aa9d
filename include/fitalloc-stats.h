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

#define FA_STATS_VERSION 2
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
    /* Meshing (FITALLOC_MESH; version 2 on): */
    uint64_t mesh_detached; /* pages given to the mesher now (mostly empty, serving no malloc) */
    uint64_t mesh_saved;    /* bytes meshing saves now: virtual pages sharing a physical one */
    uint64_t mesh_returned; /* bytes of detached pages without a live byte, given back now */
    uint64_t mesh_merges;   /* meshes made since start (each saved one OS page) */
};

/* Fill *out (out->size must be set to sizeof *out); returns 0, or -1 if out->size is too small. */
int fa_stats_get(struct fa_stats *out);

/* Heap visit: where the fast engine's memory is. An area is a page (blocks of one size class,
 * in a segment of pages) or a large block (a mapping of its own). */
#define FA_AREA_PAGE 1
#define FA_AREA_LARGE 2

struct fa_heap_area {
    int kind; /* FA_AREA_PAGE or FA_AREA_LARGE */
    int mine; /* 1: a page of the calling thread's heap */
    /* A page: an opaque id of the thread heap that owns it, the same for all its pages while
     * the thread lives and while its heap is parked after the thread ended (a later thread may
     * take the heap, pages and all: FITALLOC_PARKED_HEAPS); 0 for a page abandoned, or left in
     * the page pool for any thread to take, with blocks still in use. A large block: 0 (large blocks belong to no heap). */
    uintptr_t owner;
    void *start; /* page: address of its first block; large: the block (what malloc returned) */
    size_t size; /* page: bytes its blocks span (capacity * block_size); large: usable bytes */
    size_t block_size; /* page: bytes per block (its size class); large: size */
    size_t capacity;   /* page: blocks that fit in it; large: 1 */
    /* Page: blocks in use (0 for a page its heap keeps at hand for the next malloc of that
     * size); large: 1. */
    size_t used;
    /* Meshing (FITALLOC_MESH=1), a page given to the mesher: its bytes whose physical memory
     * it shares with other pages, and its bytes given back to the OS as no block there was
     * live. 0 otherwise, and for large blocks. */
    size_t shared;
    size_t returned;
};

/* Called by fa_heap_visit for every area. It may run while the visit holds the engine's global
 * lock: it must not call malloc, free or any other allocation function, nor anything of
 * fitalloc. Collect into memory set aside beforehand. */
typedef void (*fa_heap_visit_fn)(const struct fa_heap_area *area, void *arg);

/* Visit every page in use of every thread heap (abandoned pages too), then every live large
 * block; arg is passed to fn unchanged. Returns the number of areas visited (0 in
 * FITALLOC_MODE=lab, where the fast engine holds nothing; see fa_lab_walk), or -1 if fn is
 * NULL. A block the program holds lies in exactly one area: start <= p < start + size.
 *
 * What is exact: with no other thread allocating or freeing, everything. Then the sum of
 * used * block_size over pages plus the large blocks' sizes is fa_stats.bytes_in_use, except
 * that a page's `used` still counts blocks other threads freed into it that its owner has not
 * taken back yet (fa_stats subtracts those in-flight frees; the visit cannot tell which page
 * they are in). With FITALLOC_MESH=1 the same holds for any thread's frees into a page given to
 * the mesher, until its next pass (fa_collect() runs one).
 * What is a snapshot: the pages of other running threads change under the visit without a
 * lock (their `used` is read as it is at that moment; a page set up or given back meanwhile may
 * be missed or reported once more), like the counters of fa_stats_get. Large blocks are listed
 * under the engine's global lock, so none is unmapped during the visit; one that another
 * thread reallocates in place meanwhile is reported with its old or its new size.
 * fn runs with that lock held: it must not call malloc, free or any other function of
 * fitalloc (it would deadlock), nor take a lock another thread may hold while allocating.
 * The visit is meant for tests and diagnostics, not for a program's hot path. */
int fa_heap_visit(fa_heap_visit_fn fn, void *arg);

#ifdef __cplusplus
}
#endif

#endif /* FITALLOC_STATS_H */

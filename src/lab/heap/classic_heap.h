/* The classic heap: one contiguous region that grows like the program break, carved into
 * blocks with boundary tags (index/block.h), split on allocation and coalesced on free, with a
 * fit policy (policy/fit_policy.h) choosing the block from its free-block index
 * (index/free_index.h). It knows nothing about threads: its caller (a lock mode,
 * threads/threads_*.c) makes sure one thread at a time uses it, except for the lock-free remote
 * free list, which any thread may push to.
 *
 *   region (a reservation of `reserve` bytes, aligned to it by the caller)
 *   +-----------+------------------------------------+----------------+- - - - - - - - -+
 *   | metadata  | block | block | free block | block | committed,     | reserved only   |
 *   | (struct,  |                                    | not yet in use |                 |
 *   | lists)    | start                          brk |      committed |           limit |
 *   +-----------+------------------------------------+----------------+- - - - - - - - -+
 *
 * The break only grows: a request no free block can serve appends a block at `brk` (or
 * extends the last block when it is free), committing memory in FA_LAB_COMMIT_STEP steps.
 * In arena mode (cfg.arena > 0) the whole arena is committed at creation as one free block
 * and the break never moves again: a request that does not fit fails.
 *
 * A heap can be created on its own (tests, tools) with _fa_classic_heap_create, or laid out at
 * the start of a slot of a lab's reservation with _fa_classic_heap_create_at.
 */
#ifndef FA_LAB_CLASSIC_HEAP_H
#define FA_LAB_CLASSIC_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/options.h"
#include "lab/index/block.h"
#include "lab/index/free_index.h"
#include "lab/policy/fit_policy.h"
#include "platform/atomic.h"

/* Memory is committed in steps of this many bytes past the break (fewer mprotect calls). */
#define FA_LAB_COMMIT_STEP ((size_t)1 << 20)
/* Exact-size lists of segregated fit stop at this payload size (FITALLOC_LAB_EXACT_MAX). */
#define FA_LAB_EXACT_MAX_LIMIT 4096

struct fa_classic_heap_config {
    enum fa_policy policy;
    enum fa_lab_index index;
    bool coalesce;    /* merge a freed block with free neighbours */
    size_t arena;     /* 0: grow as needed; else the fixed heap size, obtained once */
    size_t exact_max; /* segregated fit: exact-size lists for payloads up to this size */
};

/* The counters of one heap (definitions in docs/lab.md). Only the thread that owns the heap
 * at the moment (holds its lock, or owns it in thread mode) writes them, with relaxed atomic
 * stores; any thread may read them. */
struct fa_classic_heap_counters {
    uint64_t mallocs, frees, reuses, grows, splits, coalesces, blocks, requested;
    uint64_t payload_grown; /* payload bytes the break added: the classic "max heap" */
    uint64_t free_blocks;
    uint64_t free_size;  /* whole free blocks, headers included */
    uint64_t heap_bytes; /* brk - start */
    uint64_t granted;    /* usable bytes of the counted mallocs (their blocks less the header) */
    /* By the granted block's size class (FA_LAB_SIZE_CLASSES: [2^k, 2^(k+1)) bytes). */
    uint64_t class_mallocs[48], class_requested[48], class_granted[48];
};

typedef struct fa_classic_heap {
    struct fa_classic_heap_config cfg;
    const struct fa_fit_policy *policy;
    uintptr_t region, start, brk, committed, limit;
    size_t reserve;
    bool last_free; /* the block that ends at brk is free (it has no next header to say so) */
    /* The free blocks, of the kind the policy searches (its exact lists follow the struct). */
    struct fa_free_index index;
    struct fa_classic_heap_counters count;
    /* Thread mode: blocks freed by other threads, a lock-free stack through their payloads. */
    void *remote;
    uint64_t debug_ops;
} fa_classic_heap;

/* Counter update by the heap's current owner (see struct fa_classic_heap_counters). */
#define FA_HEAP_COUNT(h, field, delta)                                                             \
    fa_atomic_store_relaxed(&(h)->count.field, (h)->count.field + (uint64_t)(delta))
#define FA_HEAP_READ(h, field) fa_atomic_load_relaxed(&(h)->count.field)

/* Lay a heap out at the start of [region, region + reserve) (reserved, not committed).
 * NULL if the reservation is too small or memory cannot be committed. */
fa_classic_heap *_fa_classic_heap_create_at(void *region, size_t reserve,
                                            const struct fa_classic_heap_config *cfg);
/* A heap with its own reservation of `reserve` bytes (arena mode: metadata + arena). */
fa_classic_heap *_fa_classic_heap_create(const struct fa_classic_heap_config *cfg, size_t reserve);
/* Give the memory of a heap made by _fa_classic_heap_create back to the OS. */
void _fa_classic_heap_destroy(fa_classic_heap *h);

/* n bytes, 16-byte aligned; NULL when no block fits and the heap cannot grow (errno untouched). */
void *_fa_classic_heap_alloc(fa_classic_heap *h, size_t n);
/* n bytes aligned to alignment (a power of two); NULL as above. */
void *_fa_classic_heap_alloc_aligned(fa_classic_heap *h, size_t alignment, size_t n);
/* Free p; a pointer that is not a live block of h aborts naming caller ("free", ...). */
void _fa_classic_heap_free(fa_classic_heap *h, void *p, const char *caller);
/* Resize p in place to hold n bytes (shrink, or grow into a free next block or past the
 * break); false if it cannot, leaving p unchanged. */
bool _fa_classic_heap_resize(fa_classic_heap *h, void *p, size_t n);
/* Usable bytes of the live block p (aborts like free on a bad pointer). */
size_t _fa_classic_heap_usable(fa_classic_heap *h, const void *p, const char *caller);

/* Any thread: hand p back to h's owner through the remote list (lock-free). */
void _fa_classic_heap_remote_free(fa_classic_heap *h, void *p, const char *caller);
/* The owner: free every block other threads handed back. */
void _fa_classic_heap_drain(fa_classic_heap *h);

/* The heap has the buddy system's layout (heap/buddy.h). */
static inline bool fa_heap_is_buddy(const fa_classic_heap *h)
{
    return h->index.kind == FA_INDEX_BUDDY;
}

/* The heap has the slab allocator's layout (heap/slab.h). */
static inline bool fa_heap_is_slab(const fa_classic_heap *h)
{
    return h->index.kind == FA_INDEX_SLAB;
}

static inline bool _fa_classic_heap_contains(const fa_classic_heap *h, const void *p)
{
    return (uintptr_t)p >= h->start && (uintptr_t)p < h->limit;
}

/* Largest free payload, and a walk over the free blocks (size of the whole block). */
size_t _fa_classic_heap_largest_free(fa_classic_heap *h);
void _fa_classic_heap_foreach_free(fa_classic_heap *h, void (*fn)(size_t size, void *arg),
                                   void *arg);

/* heap_check.c: the invariant checker; aborts with a message on the first violation. */
void _fa_classic_heap_check(fa_classic_heap *h);
/* FA_DEBUG builds: check after an operation (cheaply bounded on big heaps, see heap_check.c). */
void _fa_classic_heap_debug_check(fa_classic_heap *h);

#ifdef FA_DEBUG
#define FA_LAB_DEBUG_CHECK(h) _fa_classic_heap_debug_check(h)
#else
#define FA_LAB_DEBUG_CHECK(h) ((void)0)
#endif

#endif

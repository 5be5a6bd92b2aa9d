/* Simple segregated storage, the slab allocator (Bonwick, USENIX 1994), as a layout of the
 * classic heap: the same headers, break, walk, remote frees and lock modes, but the heap is a
 * sequence of FA_SLAB_PAGE-byte pages from its start, each either a slab page carved into equal
 * blocks of one size class or part of a run of whole pages (a large block, or free pages).
 *
 *   malloc(n <= 8 KiB)  the head of its class's free list; if that is empty, a free page (or
 *                       a new one past the break) is carved into blocks of the class, all
 *                       free, and the first is taken. No block is ever split or merged.
 *   malloc(n > 8 KiB)   a run of whole pages (first fit among the free runs, the rest of a
 *                       longer one put back, else past the break): the block's waste is
 *                       less than a page.
 *   free                the block goes back on its class's list and its page's count of
 *                       blocks in use drops; a slab page left empty is returned: its blocks
 *                       leave the list and the page becomes a free run, for any class or
 *                       large block — but for one page per class, kept carved (a spare, as
 *                       Bonwick's caches keep empty slabs until memory is reclaimed), so that
 *                       a class whose only block comes and goes does not carve and return a
 *                       page every time. A freed large block is a free run; with coalescing
 *                       on, free runs merge with free runs beside them (the page layer's
 *                       merging; the blocks of slab pages never merge).
 *
 * The page table (slab_lists.h) says each page's class and blocks in use. The heap's start
 * sits 16 bytes before its origin, as in the buddy layout (buddy.h): a block of a power-of-two
 * class has its payload aligned to its size, a run's to a page; aligned requests take such a
 * class, a run, or for more than a page a run past the break at a multiple of the alignment.
 */
#ifndef FA_LAB_SLAB_H
#define FA_LAB_SLAB_H

#include <stddef.h>
#include <stdint.h>

#include "lab/heap/classic_heap.h"

/* The block size that serves n bytes: its class's, or whole pages; 0 if n is too large. */
size_t _fa_slab_size_for(size_t n);
/* A used block of `size` bytes (a class size or whole pages), from its class or the runs, or
 * past the break; 0 when none can be had. */
uintptr_t _fa_slab_take(fa_classic_heap *h, size_t size);
/* A used run of whole pages whose payload is aligned to `alignment` (more than a page). */
uintptr_t _fa_slab_take_aligned_run(fa_classic_heap *h, size_t size, size_t alignment);
/* The block (a valid header, not in the index) becomes free; its page may be returned. */
void _fa_slab_free(fa_classic_heap *h, uintptr_t block);
/* In arena mode: the arena becomes one free run. */
void _fa_slab_arena(fa_classic_heap *h);
/* The layout's own invariants: pages tiled by their class's blocks, counts of blocks in use
 * right, runs whole pages of no class; abort on a violation. */
void _fa_slab_check(fa_classic_heap *h);

#endif

/* What the layouts of heap/ share: the block steps of a classic heap, each with the counters it
 * moves (classic_heap.c, buddy.c and slab.c). Only the heap's current owner calls them. */
#ifndef FA_LAB_HEAP_BLOCKS_H
#define FA_LAB_HEAP_BLOCKS_H

#include "lab/heap/classic_heap.h"

/* A whole new header: size, FREE and PREV_FREE. */
static inline void fa_heap_write_header(uintptr_t block, size_t size, bool free, bool prev_free)
{
    fa_block_set_word0(block, size | (free ? FA_TAG_FREE : 0) | (prev_free ? FA_TAG_PREV_FREE : 0));
}

/* Tell the block at `next` whether its previous neighbour is free. The last block has no next
 * header: the heap remembers it instead. */
static inline void fa_heap_set_prev_free_of(fa_classic_heap *h, uintptr_t next, bool free)
{
    if (next == h->brk)
        h->last_free = free;
    else
        fa_block_set_prev_free(next, free);
}

/* The index, with the free-block counters. */

static inline void fa_heap_index_insert(fa_classic_heap *h, uintptr_t block)
{
    _fa_index_insert(&h->index, block);
    FA_HEAP_COUNT(h, free_blocks, 1);
    FA_HEAP_COUNT(h, free_size, fa_block_size(block));
}

static inline void fa_heap_index_remove(fa_classic_heap *h, uintptr_t block)
{
    _fa_index_remove(&h->index, block);
    FA_HEAP_COUNT(h, free_blocks, -1);
    FA_HEAP_COUNT(h, free_size, -fa_block_size(block));
}

static inline void fa_heap_index_resized(fa_classic_heap *h, uintptr_t block, size_t old_size)
{
    _fa_index_resized(&h->index, block, old_size);
    FA_HEAP_COUNT(h, free_size, fa_block_size(block) - old_size);
}

static inline void fa_heap_index_replace(fa_classic_heap *h, uintptr_t old_block,
                                         uintptr_t new_block)
{
    size_t old_size = fa_block_size(old_block);
    _fa_index_replace(&h->index, old_block, new_block);
    FA_HEAP_COUNT(h, free_size, fa_block_size(new_block) - old_size);
}

/* A free block out of the index and used; its next neighbour learns it. */
static inline void fa_heap_take_free(fa_classic_heap *h, uintptr_t block)
{
    fa_heap_index_remove(h, block);
    fa_block_set_size(block, fa_block_size(block), false);
    fa_heap_set_prev_free_of(h, block + fa_block_size(block), false);
}

/* Mark a block free with its footer (the index is the caller's business). */
static inline void fa_heap_mark_free(uintptr_t block, size_t size)
{
    fa_block_set_size(block, size, true);
    fa_block_set_word1(block, FA_FREE_TAG);
    *fa_block_footer(block, size) = size;
}

/* Move the break up by `add` bytes, committing memory as needed; false if the reservation is
 * full or the OS refuses. */
bool _fa_heap_extend_break(fa_classic_heap *h, size_t add);

/* No free block fits: grow the heap by a used block of `size` bytes, extending the last block
 * if it is free (and too small) and `extend` allows, else appending one at the break. 0 if the
 * heap cannot grow. */
uintptr_t _fa_heap_grow(fa_classic_heap *h, size_t size, bool extend);

#endif

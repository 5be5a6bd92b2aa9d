/* The binary buddy system's heap layout (buddy.h). */
#include "lab/heap/buddy.h"

#include "common/assert.h"
#include "lab/heap/heap_blocks.h"
#include "platform/compiler.h"

#define BUDDY_MIN ((size_t)1 << FA_BUDDY_MIN_ORDER)

size_t _fa_buddy_size_for(size_t n)
{
    size_t size = fa_block_size_for(n);
    if (!size)
        return 0;
    /* The next power of two at or above size: one above the highest bit of size - 1. */
    size_t pow2 = (size_t)1 << (64 - __builtin_clzll(size - 1));
    return pow2 < BUDDY_MIN ? BUDDY_MIN : pow2;
}

/* Halve the used block down to `size` bytes. Each upper half becomes a free block; its buddy is
 * the lower half, in use, so it merges with nothing. */
static void split_down(fa_classic_heap *h, uintptr_t block, size_t size)
{
    size_t have = fa_block_size(block);
    FA_ASSERT(have >= size && (size & (size - 1)) == 0);
    while (have > size) {
        have /= 2;
        uintptr_t upper = block + have;
        fa_heap_write_header(upper, have, false, false);
        fa_heap_mark_free(upper, have);
        fa_heap_index_insert(h, upper);
        fa_heap_set_prev_free_of(h, upper + have, true);
        FA_HEAP_COUNT(h, splits, 1);
        FA_HEAP_COUNT(h, blocks, 1);
    }
    fa_block_set_size(block, size, false);
}

void _fa_buddy_free(fa_classic_heap *h, uintptr_t block)
{
    size_t size = fa_block_size(block);
    while (h->cfg.coalesce) {
        uintptr_t buddy = fa_buddy_of(h, block, size);
        if (buddy >= h->brk || !fa_block_is_free(buddy) || fa_block_size(buddy) != size)
            break;
        fa_heap_index_remove(h, buddy);
        FA_HEAP_COUNT(h, coalesces, 1);
        FA_HEAP_COUNT(h, blocks, -1);
        if (buddy < block) {
            /* The header left inside the merged block still says "freed": freeing this
             * pointer again is reported as a double free. */
            fa_block_set_size(block, size, true);
            fa_block_set_word1(block, FA_FREE_TAG);
            block = buddy;
        }
        size *= 2;
    }
    fa_heap_mark_free(block, size);
    fa_heap_index_insert(h, block);
    fa_heap_set_prev_free_of(h, block + size, true);
}

void _fa_buddy_shrink(fa_classic_heap *h, uintptr_t block, size_t size)
{
    split_down(h, block, size);
}

void _fa_buddy_fill(fa_classic_heap *h, uintptr_t from, uintptr_t to, bool prev_free)
{
    size_t off = from - h->start, end = to - h->start;
    FA_ASSERT(off % BUDDY_MIN == 0 && end % BUDDY_MIN == 0);
    while (off < end) {
        /* The largest block that may start here: the lowest set bit of the offset (a block of
         * 2^k starts at a multiple of 2^k), no larger than what is left. */
        size_t size = off ? off & -off : (size_t)1 << FA_BUDDY_MAX_ORDER;
        while (size > end - off)
            size /= 2;
        uintptr_t block = h->start + off;
        fa_heap_write_header(block, size, false, prev_free);
        FA_HEAP_COUNT(h, blocks, 1);
        FA_HEAP_COUNT(h, payload_grown, size - FA_BLOCK_HEADER);
        _fa_buddy_free(h, block);
        prev_free = true;
        off += size;
    }
}

/* No free block fits: the break moves to the next multiple of `size` past it, the gap is tiled
 * with free blocks, and a used block of `size` bytes is appended. */
static uintptr_t grow(fa_classic_heap *h, size_t size)
{
    if (h->cfg.arena)
        return 0;
    uintptr_t old_brk = h->brk;
    bool prev_free = h->last_free;
    uintptr_t block = h->start + fa_align_up(old_brk - h->start, size);
    if (!_fa_heap_extend_break(h, block + size - old_brk))
        return 0;
    /* The new block's header first: freeing the gap's last block sets its PREV_FREE bit. */
    fa_heap_write_header(block, size, false, prev_free);
    h->last_free = false;
    FA_HEAP_COUNT(h, blocks, 1);
    FA_HEAP_COUNT(h, payload_grown, size - FA_BLOCK_HEADER);
    _fa_buddy_fill(h, old_brk, block, prev_free);
    return block;
}

uintptr_t _fa_buddy_take(fa_classic_heap *h, size_t size)
{
    uintptr_t block = h->policy->find(&h->index, size);
    if (!block)
        return grow(h, size);
    fa_heap_take_free(h, block);
    FA_HEAP_COUNT(h, reuses, 1);
    split_down(h, block, size);
    return block;
}

/* The binary buddy system (Knowlton 1965; Knuth, TAOCP vol. 1, 2.5) as a layout of the classic
 * heap: the same headers, break, walk, checks, remote frees and lock modes, but every block is
 * 2^k bytes (k >= FA_BUDDY_MIN_ORDER, header included) and starts at a multiple of its size
 * from the heap's start. A block of 2^(k+1) bytes splits into two halves of 2^k, buddies of each
 * other; a freed block merges with its buddy whenever the buddy is free and whole, then again
 * with the buddy of the merged block, and so on up. The buddy is found by address arithmetic:
 *
 *   buddy(block) = start + ((block - start) XOR 2^k)
 *
 * and is free and whole exactly when the header at that address says a free block of 2^k bytes
 * (a buddy split further has a smaller block at the same place).
 *
 * Allocation rounds the block up to a power of two, takes the smallest free block that large
 * (buddy_lists.h) and halves it down, each upper half going to the free lists. The rounding is
 * the system's cost: internal fragmentation, which the statistics show as granted bytes
 * beyond the requested ones. No free block large enough: the break moves to the next multiple
 * of the block's size (the gap becomes free blocks of the sizes that tile it) and the block is
 * appended there. In arena mode the arena is tiled once with the largest blocks that fit.
 *
 * The heap's start sits 16 bytes before its origin, a power of two from the region's start
 * (half the reservation up to 1 GiB, or what an arena leaves: classic_heap.c), so that a block
 * of 2^k bytes has its payload aligned to 2^k up to the origin's alignment: an aligned request
 * takes a block of at least the alignment; one beyond the origin's fails (NULL).
 */
#ifndef FA_LAB_BUDDY_H
#define FA_LAB_BUDDY_H

#include <stddef.h>
#include <stdint.h>

#include "lab/heap/classic_heap.h"

/* The block size that serves n bytes: a power of two, at least 2^FA_BUDDY_MIN_ORDER; 0 if n is
 * too large. */
size_t _fa_buddy_size_for(size_t n);
/* A used block of exactly `size` bytes (a power of two), split from the smallest free block
 * that large or appended past the break; 0 when neither works. */
uintptr_t _fa_buddy_take(fa_classic_heap *h, size_t size);
/* The block (a valid header, not in the index) becomes free, merged with its buddies. */
void _fa_buddy_free(fa_classic_heap *h, uintptr_t block);
/* Halve a used block down to `size` bytes, the upper halves going free (realloc shrinking). */
void _fa_buddy_shrink(fa_classic_heap *h, uintptr_t block, size_t size);
/* Tile [from, to) (offsets from the start that are multiples of the smallest block) with free
 * blocks, each the largest the buddy rules allow there; `prev_free`: the block ending at
 * `from` is free. */
void _fa_buddy_fill(fa_classic_heap *h, uintptr_t from, uintptr_t to, bool prev_free);

static inline uintptr_t fa_buddy_of(const fa_classic_heap *h, uintptr_t block, size_t size)
{
    return h->start + ((block - h->start) ^ size);
}

#endif

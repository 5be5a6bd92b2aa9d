/* The free lists of the binary buddy system (Knowlton 1965; Knuth, TAOCP vol. 1, 2.5): one LIFO
 * list per order k, holding the free blocks of exactly 2^k bytes, and a bitmap of the orders
 * whose list is not empty, so that "the smallest free block of at least 2^k bytes" is one masked
 * find-first-set. Insert and remove are O(1); the lists live in the free blocks (fit_list.h).
 *
 *   bitmap   bit k set  <=>  order[k] is not empty
 *
 * The structure lives in the heap's metadata, after the heap (classic_heap.c); the buddy
 * layout itself (splitting in halves, merging with the buddy) is heap/buddy.c's.
 */
#ifndef FA_LAB_BUDDY_LISTS_H
#define FA_LAB_BUDDY_LISTS_H

#include <stddef.h>
#include <stdint.h>

#include "lab/index/block.h"
#include "lab/index/fit_list.h"

/* Smallest block: 64 bytes, the power of two that holds a free block (FA_BLOCK_MIN). */
#define FA_BUDDY_MIN_ORDER 6
/* Largest: 2^47 bytes, above any block size the lab allows (FA_BLOCK_MAX plus the header). */
#define FA_BUDDY_MAX_ORDER 47

_Static_assert(((size_t)1 << FA_BUDDY_MIN_ORDER) >= FA_BLOCK_MIN, "a free buddy holds its links");

struct fa_buddy_lists {
    uint64_t bitmap;
    struct fa_lifo_list order[FA_BUDDY_MAX_ORDER + 1];
    size_t count;
};

void _fa_buddy_lists_init(struct fa_buddy_lists *b);
/* A free block of 2^k bytes (its header holds the size) in or out of its order's list. */
void _fa_buddy_lists_insert(struct fa_buddy_lists *b, uintptr_t block);
void _fa_buddy_lists_remove(struct fa_buddy_lists *b, uintptr_t block, size_t size);
/* A free block of the smallest order holding one of at least `size` bytes, or 0. */
uintptr_t _fa_buddy_lists_find(const struct fa_buddy_lists *b, size_t size);
/* The size of the largest free block (0: none). */
size_t _fa_buddy_lists_largest(const struct fa_buddy_lists *b);
void _fa_buddy_lists_visit(const struct fa_buddy_lists *b, void (*fn)(uintptr_t block, void *arg),
                           void *arg);
/* Links, sizes (every block of order[k] has 2^k bytes), bitmap and count; abort naming `heap`. */
void _fa_buddy_lists_check(const struct fa_buddy_lists *b, const void *heap);

/* The order of a power of two. */
static inline unsigned fa_buddy_order(size_t size)
{
    return (unsigned)__builtin_ctzll(size);
}

#endif

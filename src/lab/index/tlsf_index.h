/* The TLSF index (Masmano, Ripoll, Crespo and Real, "TLSF: a new dynamic memory allocator for
 * real-time systems", ECRTS 2004): segregated free lists under a two-level bitmap, so that
 * insert, remove and find each take a bounded number of steps, whatever the number of free
 * blocks.
 *
 *   first level  fl: the block size's highest set bit (a power-of-two range [2^k, 2^(k+1)));
 *   second level sl: that range cut into FA_TLSF_SL_COUNT equal subranges.
 *
 *   fl_bitmap        bit f set  <=>  sl_bitmap[f] != 0
 *   sl_bitmap[f]     bit s set  <=>  lists[f][s] is not empty
 *   lists[f][s]      LIFO list of the free blocks whose size maps to (f, s)
 *
 * Sizes below FA_TLSF_LINEAR (256 bytes) make first level 0, cut in 16-byte steps: every block
 * there has exactly the size of its list. Above, list (f, s) holds the sizes
 * [2^(f+7) + s * 2^(f+3), 2^(f+7) + (s+1) * 2^(f+3)).
 *
 * Find is TLSF's "good fit": the request is rounded up to the start of the next subrange, so the
 * head of any non-empty list at or above that one fits without looking at its size; one masked
 * find-first-set on the second level, and if that is empty one on the first level, name the
 * list. A block of the request's own subrange that would fit is not seen: TLSF trades that
 * (a little more memory) for the constant time.
 *
 * The structure (about 10 KiB) lives in the heap's metadata, after the heap (classic_heap.c).
 */
#ifndef FA_LAB_TLSF_INDEX_H
#define FA_LAB_TLSF_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "lab/index/block.h"
#include "lab/index/fit_list.h"

#define FA_TLSF_SL_LOG2 4
#define FA_TLSF_SL_COUNT (1 << FA_TLSF_SL_LOG2)
/* Sizes below 2^FA_TLSF_LINEAR_LOG2 sit in first level 0, one list per 16 bytes. */
#define FA_TLSF_LINEAR_LOG2 (FA_TLSF_SL_LOG2 + 4)
#define FA_TLSF_LINEAR ((size_t)1 << FA_TLSF_LINEAR_LOG2)
/* Block sizes stay below 2^47 (FA_BLOCK_MAX plus header and a rounding): highest bit <= 46. */
#define FA_TLSF_FL_COUNT (46 - FA_TLSF_LINEAR_LOG2 + 2)

_Static_assert((size_t)FA_TLSF_SL_COUNT *FA_BLOCK_ALIGN == FA_TLSF_LINEAR,
               "first level 0 is cut in block-alignment steps");
_Static_assert(FA_TLSF_FL_COUNT <= 64 && FA_TLSF_SL_COUNT <= 32, "the bitmaps fit their words");

struct fa_tlsf {
    uint64_t fl_bitmap;
    uint32_t sl_bitmap[FA_TLSF_FL_COUNT];
    struct fa_lifo_list lists[FA_TLSF_FL_COUNT][FA_TLSF_SL_COUNT];
    size_t count;
    /* Index steps taken (bitmap searches, list links changed): tests count them to show that
     * no operation's cost depends on the number of free blocks. */
    uint64_t steps;
};

void _fa_tlsf_init(struct fa_tlsf *t);
void _fa_tlsf_insert(struct fa_tlsf *t, uintptr_t block);
/* Out of the list of `size` (the size it was inserted with). */
void _fa_tlsf_remove(struct fa_tlsf *t, uintptr_t block, size_t size);
/* Good fit: a free block of at least `size` bytes in O(1), or 0 (does not remove it). */
uintptr_t _fa_tlsf_find(struct fa_tlsf *t, size_t size);
/* The largest free block's size (0: none): the highest non-empty list, walked. */
size_t _fa_tlsf_largest(const struct fa_tlsf *t);
/* fn once per block, list by list. */
void _fa_tlsf_visit(const struct fa_tlsf *t, void (*fn)(uintptr_t block, void *arg), void *arg);
/* Bitmaps against lists, each block in the list of its size, the count; abort naming `heap`. */
void _fa_tlsf_check(const struct fa_tlsf *t, const void *heap);

/* The list of a block of `size` bytes (what insert uses). */
void _fa_tlsf_mapping(size_t size, unsigned *fl, unsigned *sl);

#endif

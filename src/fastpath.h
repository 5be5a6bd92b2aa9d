/* The inline malloc and free fast paths.
 *
 * Budget (x86-64, gcc -O2, counted with callgrind, bench/callgrind_pair.sh): malloc 14
 * instructions and free 27 when the block is the thread's own, returns included; everything
 * else goes out of line.
 */
#ifndef FA_FASTPATH_H
#define FA_FASTPATH_H

#include "internal.h"

/* Empty asm statements that only steer gcc's register choice, one instruction each on these
 * paths: malloc builds the block in the return register (else it ends with a move), and free
 * keeps one page pointer (else it keeps the segment and the offset and adds them twice). */
#if defined(__x86_64__)
#define FA_IN_RETURN_REGISTER(x) __asm__("" : "+a"(x))
#else
#define FA_IN_RETURN_REGISTER(x) ((void)0)
#endif
#define FA_MATERIALIZE(x) __asm__("" : "+r"(x))

static inline void *fa_malloc_inline(size_t n)
{
    fa_heap_t *heap = _fa_heap_tls;
    if (fa_likely(n <= FA_DIRECT_MAX)) {
        fa_page_t *page = heap->direct[(n + FA_ALIGN - 1) / FA_ALIGN];
        fa_block_t *block = page->free;
        if (fa_likely(block != NULL)) {
            page->free = block->next;
            page->used++;
            FA_IN_RETURN_REGISTER(block);
            return block;
        }
    }
    return _fa_malloc_generic(n, heap);
}

/* Bits that must be clear in a pointer we may have returned: above the 47-bit user address
 * space, or below the 16-byte alignment. One test replaces a range and an alignment check. */
#define FA_FOREIGN_BITS (~(((uintptr_t)1 << FA_ADDRESS_BITS) - 1) | (FA_ALIGN - 1))

static inline void fa_free_inline(void *p)
{
    uintptr_t a = (uintptr_t)p;
    /* NULL, foreign and misaligned pointers, large blocks, frees into full pages and frees
     * from other threads all fail one of these tests and take the slow path. */
    unsigned entry;
    if (fa_likely((a & FA_FOREIGN_BITS) == 0 &&
                  fa_map_is_segment(
                      entry = __atomic_load_n(&_fa_segmap[a >> FA_SEG_SHIFT], __ATOMIC_RELAXED)))) {
        fa_segment_t *seg = (fa_segment_t *)(a & ~FA_SEG_MASK);
        fa_page_t *page = &seg->pages[(a & FA_SEG_MASK) >> entry];
        FA_MATERIALIZE(page);
        if (fa_likely(__atomic_load_n(&page->owner, __ATOMIC_RELAXED) == (uintptr_t)_fa_heap_tls)) {
            fa_block_t *block = p;
            block->next = page->free;
            page->free = block;
            page->frees++;
            if (fa_unlikely(--page->used == 0))
                _fa_page_emptied(page);
            return;
        }
        _fa_free_in_page(p, seg, page); /* another thread's page, a full page, a large block */
        return;
    }
    _fa_free_slow(p);
}

#endif

/* The inline malloc and free fast paths.
 *
 * Budget (x86-64, gcc -O2, counted with callgrind): malloc about 10 instructions and free
 * about 16 when the block is the thread's own; everything else goes out of line.
 */
#ifndef FA_FASTPATH_H
#define FA_FASTPATH_H

#include "internal.h"

static inline void *fa_malloc_inline(size_t n)
{
    fa_heap_t *heap = _fa_heap_tls;
    if (fa_likely(n <= FA_DIRECT_MAX)) {
        fa_page_t *page = heap->direct[(n + FA_ALIGN - 1) / FA_ALIGN];
        fa_block_t *block = page->free;
        if (fa_likely(block != NULL)) {
            page->free = block->next;
            page->used++;
            return block;
        }
    }
    return _fa_malloc_generic(heap, n);
}

static inline void fa_free_inline(void *p)
{
    uintptr_t a = (uintptr_t)p;
    uintptr_t chunk = a >> FA_SEG_SHIFT;
    /* NULL, foreign and misaligned pointers, large blocks, frees into full pages and frees
     * from other threads all fail one of these tests and take the slow path. */
    if (fa_likely(chunk < FA_SEGMAP_SIZE && (a & (FA_ALIGN - 1)) == 0 &&
                  __atomic_load_n(&_fa_segmap[chunk], __ATOMIC_RELAXED) == FA_MAP_SEGMENT)) {
        fa_segment_t *seg = (fa_segment_t *)(a & ~FA_SEG_MASK);
        fa_page_t *page = &seg->pages[(a - (uintptr_t)seg) >> seg->page_shift];
        if (fa_likely(__atomic_load_n(&page->owner, __ATOMIC_RELAXED) == (uintptr_t)_fa_heap_tls)) {
            fa_block_t *block = p;
            block->next = page->free;
            page->free = block;
            page->frees++;
            if (fa_unlikely(--page->used == 0))
                _fa_page_emptied(page);
            return;
        }
    }
    _fa_free_slow(p);
}

#endif

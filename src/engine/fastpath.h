/* The inline malloc and free fast paths.
 *
 * Budget (x86-64, gcc -O2): malloc 14 instructions and free 28 when the block is the thread's
 * own, returns included; bench/callgrind_pair.sh counts 39 per malloc+free pair beyond the
 * calls themselves (16-128 bytes). Everything else goes out of line, and the out-of-line
 * functions take their arguments in the registers the fast path already holds them in (no
 * copies here).
 */
#ifndef FA_FASTPATH_H
#define FA_FASTPATH_H

#include "engine/free_list.h"
#include "platform/atomic.h"

/* The head block of a page from a direct slot (or bin_page), taken off its list; NULL when the
 * list is empty or its link was overwritten: the slow path tells the two apart before anything
 * follows the link. */
static inline __attribute__((always_inline)) fa_block_t *fa_direct_pop(fa_page_t *page)
{
    fa_block_t *block = page->free;
    if (fa_unlikely(!fa_link_usable(block)))
        return NULL;
    fa_block_t *next = fa_link_decode(block->link);
    page->free = next;
    /* The next malloc of this size reads the next block's link: fetch its line now. In a heap
     * whose blocks are freed at random (a cache that evicts), a page's free list holds blocks
     * freed long ago, out of the cache, and malloc waited on that read (docs/design.md). A
     * prefetch never faults, so the list's end and a corrupt link are harmless here. */
    __builtin_prefetch(next, 1);
    block->mark = 0;
    return block;
}

static inline __attribute__((always_inline)) void *fa_malloc_inline(size_t n)
{
    fa_heap_t *heap = _fa_heap_tls;
    if (fa_likely(n <= FA_DIRECT_MAX)) {
        fa_block_t *block = fa_direct_pop(heap->direct[n]);
        if (fa_likely(block != NULL))
            return block;
    }
    return _fa_malloc_generic(n, heap);
}

/* A free of a block of the thread's own page not on the full list: onto the page's local list,
 * as the inline free and the profiler's free of an unsampled block (free.c) both push it. */
static inline __attribute__((always_inline)) void fa_push_own(fa_page_t *page, fa_block_t *block)
{
    /* The mark last: stored next to the link, gcc packs the two into one vector store, which
     * costs three instructions more to assemble. */
    block->link = fa_link_encode(page->local);
    page->local = block;
    block->mark = fa_page_mark(page);
    if (fa_unlikely(--page->used == 0))
        _fa_free_reached_zero(page);
}

/* caller: the function the program called ("free", "operator delete", ...), for reports;
 * size: the size a sized free says the block has (0: not given), checked in secure mode. */
static inline __attribute__((always_inline)) void fa_free_inline(void *p, const char *caller,
                                                                 size_t size)
{
    uintptr_t a = (uintptr_t)p;
    /* The chunk's index wraps for a non-canonical address instead of being range-checked: the
     * segment found then is a real one, and the block test below, made on the whole address,
     * rejects it or lets it fault at its first read (free_list.h). */
    uintptr_t chunk = (a >> FA_SEG_SHIFT) & (FA_SEGMAP_SIZE - 1);
    /* NULL, foreign pointers, large blocks, frees into full pages and frees from other threads
     * all fail one of these tests and take the slow path. */
    fa_map_entry_t entry = fa_atomic_load_relaxed(&_fa_segmap[chunk]);
    if (fa_likely(fa_map_is_segment(entry))) {
        fa_page_t *page = fa_map_page(entry, a);
        if (fa_likely(fa_atomic_load_relaxed(&page->thread) == fa_thread_pointer())) {
            if (fa_unlikely(!fa_own_page_has_block(page, a)))
                _fa_bad_pointer(caller, p);
            fa_block_t *block = p;
            if (fa_unlikely(block->mark == fa_page_mark(page))) {
                _fa_free_marked(p, page, caller);
                return;
            }
            fa_push_own(page, block);
            return;
        }
        /* another thread's page, a full page, a large block, a secure page (the segment is
         * found again there: passing it would keep a register live here, and cost a copy) */
        _fa_free_in_page(p, page, caller, size);
        return;
    }
    _fa_free_slow(p, caller, size);
}

/* malloc_usable_size's usual case, found as free finds a block: a block of a page in use, not
 * a mode's (secure mode's usable size is the request's). Inline in malloc_usable_size too, as
 * malloc and free are: programs that count their memory ask at every malloc and free (Redis),
 * and the call from malloc_usable_size to fa_malloc_usable_size went through the PLT. A large
 * block's page index names its one descriptor, whose limit is 0: the generic path takes it. */
static inline __attribute__((always_inline)) size_t fa_usable_size_inline(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    if (fa_likely(a >> FA_ADDRESS_BITS == 0)) {
        fa_map_entry_t entry = fa_atomic_load_relaxed(&_fa_segmap[a >> FA_SEG_SHIFT]);
        if (fa_likely(fa_map_is_segment(entry))) {
            const fa_page_t *page = fa_map_page(entry, a);
            if (fa_likely(!page->by_mode && fa_atomic_load_acquire(&page->state) == FA_PAGE_USED &&
                          fa_page_has_block(page, a)))
                return page->block_size;
        }
    }
    return _fa_usable_size_generic(p);
}

/* The allocator as the interposition layer calls it: straight into the fast paths, or, in a
 * build for debugging tools, through the entry points tools.c tracks. */
#ifdef FA_TOOLS
#include "fitalloc.h"
#define fa_entry_malloc(n) fa_malloc(n)
#define fa_entry_free(p, caller, size) ((size) ? fa_free_sized((p), (size)) : fa_free(p))
#define fa_entry_usable_size(p) fa_malloc_usable_size(p)
#else
#define fa_entry_malloc(n) fa_malloc_inline(n)
#define fa_entry_free(p, caller, size) fa_free_inline((p), (caller), (size))
#define fa_entry_usable_size(p) fa_usable_size_inline(p)
#endif

#endif

/* The heap profiler in the core's pages (profile/profile.h): with FITALLOC_PROFILE on, every
 * malloc that leaves the inline fast path passes here (alloc.c), and the fast paths stay as
 * they are.
 *
 * The fast path pops a page's free list without counting. So each list is counted when it is
 * handed to the fast path (its blocks charged to the thread's distance to its sample point at
 * once), and a list that holds the sample point is cut there: the blocks before it stay on
 * `free`, the rest go back to `local`, and the page is armed. The malloc that then finds `free`
 * empty comes here and is the sample. A page holding a sampled block sends its frees out of
 * the fast path (prof_slow: FA_OWNER_SLOW, thread word 0); free.c frees those its filter of
 * sampled blocks does not name at once, and tells the profiler of the others. Once its sampled
 * blocks are freed, the owner makes it fast again when it next hands it over. */
#include "engine/fastpath.h"
#include "engine/size_class.h"
#include "profile/profile.h"

/* The owner sampled `block` of its page: until the profiler forgets it, the page's frees leave
 * the fast path, and those of the blocks its filter names take the checked one. */
static void record(fa_heap_t *heap, fa_block_t *block)
{
    fa_page_t *page;
    _fa_segment_of_block(block, &page);
    _fa_profile_record(block, page->block_size);
    fa_atomic_add_relaxed(&page->prof_sampled, 1);
    unsigned bit = fa_page_filter_bit(page, block);
    uint64_t *word = &page->prof_filter[bit / 64];
    fa_atomic_store_relaxed(word, fa_atomic_load_relaxed(word) | (uint64_t)1 << (bit % 64));
    if (!page->prof_slow) {
        page->prof_slow = 1;
        uintptr_t full = fa_atomic_load_relaxed(&page->owner) & FA_OWNER_FULL;
        fa_atomic_store_release(&page->owner, fa_owner_word(heap, page) | full);
        fa_atomic_store_relaxed(&page->thread, 0);
    }
}

/* The fast path is about to pop the head page's free list: charge the blocks put there since
 * the last count (`placed` counts them, no walk), but for the one just popped, which the
 * caller charged; when the sample point lies within, cut the list there (a walk to it). */
static void hand_over(fa_heap_t *heap, fa_page_t *page)
{
    if (page->prof_slow && !fa_atomic_load_acquire(&page->prof_sampled)) {
        page->prof_slow = 0;
        fa_page_filter_clear(page);
        fa_atomic_store_release(&page->owner, fa_owner_word(heap, page));
        fa_page_set_thread(page, heap->thread);
    }
    uint64_t fresh = page->placed - page->prof_placed;
    fresh -= fresh > 0;
    page->prof_placed = page->placed;
    size_t size = page->block_size;
    /* The usual case, without the division below: the whole list lies before the sample
     * point (a thread not started yet has 0 left, and goes on). */
    if ((int64_t)(fresh * size) < _fa_profile_self.left) {
        _fa_profile_self.left -= (int64_t)(fresh * size);
        return;
    }
    size_t before = fa_profile_blocks_before_sample(size);
    if (fresh > before && page->pinned) {
        size_t walked = 0;
        fa_block_t *last = NULL, *b = page->free;
        while (walked < before && b != FA_LIST_END && fa_page_has_block(page, (uintptr_t)b)) {
            last = b;
            b = fa_link_decode(b->link);
            walked++;
        }
        if (b != FA_LIST_END && fa_page_has_block(page, (uintptr_t)b)) {
            /* b is the block at the sample point: it and the blocks after it go to `local`.
             * The pin keeps `used` above 0 meanwhile. */
            fa_block_t *kept = last ? page->free : FA_LIST_END;
            if (last)
                last->link = fa_link_encode(FA_LIST_END);
            page->free = b;
            _fa_page_give_up_free(page);
            page->free = kept;
            page->prof_placed = page->placed;
            page->prof_armed = 1;
            fa_profile_charge((walked + 1) * size); /* through the point: the next one drawn */
            return;
        }
        /* The list ends first (blocks counted before stood in front), or a link is bad (the
         * fast path reports it): charge it uncut. */
    }
    fa_profile_charge(fresh * size);
}

/* A block the thread's malloc took from its slot's page (the shared empty page's slot: a slow
 * page), past alloc.c's usual case: charged, or the sample when the point came; then the
 * page's list is handed over. */
fa_block_t *_fa_profile_served(fa_heap_t *heap, size_t n, fa_page_t *page, fa_block_t *block,
                               bool armed)
{
    if (page == &_fa_page_empty) {
        /* A slow page (secure mode, tracing): each of its mallocs comes here. */
        size_t size = fa_bin_size(fa_bin_of(n));
        if (armed || fa_profile_charge(size))
            _fa_profile_record(block, size);
        return block;
    }
    if (armed || fa_profile_charge(page->block_size))
        record(heap, block);
    hand_over(heap, page);
    return block;
}

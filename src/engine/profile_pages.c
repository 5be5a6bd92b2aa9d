/* The heap profiler in the core's pages (profile/profile.h): with FITALLOC_PROFILE on, every
 * malloc that leaves the inline fast path comes here, and the fast paths stay as they are.
 *
 * The fast path pops a page's free list without counting. So each list is counted when it is
 * handed to the fast path (its blocks charged to the thread's distance to its sample point at
 * once), and a list that holds the sample point is cut there: the blocks before it stay on
 * `free`, the rest go back to `local`, and the page is armed. The malloc that then finds `free`
 * empty comes here and is the sample. A page holding a sampled block sends its frees to the
 * slow path (prof_slow: FA_OWNER_SLOW, thread word 0), where free.c tells the profiler; once
 * its sampled blocks are freed, the owner makes it fast again when it next hands it over. */
#include "engine/fastpath.h"
#include "engine/size_class.h"
#include "profile/profile.h"

static fa_page_t *slot_page(fa_heap_t *heap, size_t n)
{
    return n <= FA_DIRECT_MAX ? heap->direct[n] : heap->bin_page[fa_bin_of(n)];
}

/* The owner sampled `block` of its page: until the profiler forgets it, every free of the
 * page's blocks takes the slow path. */
static void record(fa_heap_t *heap, fa_block_t *block)
{
    fa_page_t *page;
    _fa_segment_of_block(block, &page);
    _fa_profile_record(block, page->block_size);
    fa_atomic_add_relaxed(&page->prof_sampled, 1);
    if (!page->prof_slow) {
        page->prof_slow = 1;
        uintptr_t full = fa_atomic_load_relaxed(&page->owner) & FA_OWNER_FULL;
        fa_atomic_store_release(&page->owner, fa_owner_word(heap, page) | full);
        fa_atomic_store_relaxed(&page->thread, 0);
    }
}

/* The fast path is about to pop the head page's free list, `length` blocks (SIZE_MAX: not
 * known): charge them, cutting the list at the sample point when it lies within. */
static void hand_over(fa_heap_t *heap, fa_page_t *page, size_t length)
{
    if (page->prof_slow && !fa_atomic_load_acquire(&page->prof_sampled)) {
        page->prof_slow = 0;
        fa_atomic_store_release(&page->owner, fa_owner_word(heap, page));
        fa_page_set_thread(page, heap->thread);
    }
    size_t size = page->block_size;
    size_t before = fa_profile_blocks_before_sample(size);
    if (length == SIZE_MAX || length > before) {
        /* Walk to the sample point, or to the list's end if that comes first. */
        size_t walked = 0;
        fa_block_t *last = NULL, *b = page->free;
        while (walked < before && b != FA_LIST_END && fa_page_has_block(page, (uintptr_t)b)) {
            last = b;
            b = fa_link_decode(b->link);
            walked++;
        }
        if (b != FA_LIST_END && fa_page_has_block(page, (uintptr_t)b) && page->pinned) {
            /* b is the block at the sample point: it and the blocks after it go to `local`.
             * The pin keeps `used` above 0 meanwhile. */
            fa_block_t *kept = last ? page->free : FA_LIST_END;
            if (last)
                last->link = fa_link_encode(FA_LIST_END);
            page->free = b;
            _fa_page_give_up_free(page);
            page->free = kept;
            page->prof_armed = 1;
            fa_profile_charge((walked + 1) * size); /* through the point: the next one drawn */
            return;
        }
        /* The list ends first, or a link is bad (the fast path reports it): charge what was
         * walked, and the rest of an unknown list when it ends past it, uncut. */
        length = b == FA_LIST_END ? walked : fa_page_count(page);
    }
    fa_profile_charge(length * size);
}

void *_fa_malloc_profiled(size_t n, fa_heap_t *heap)
{
    _fa_profile_safe_point();
    /* A thread's first call, large blocks (large.c counts them) and the lab (lab_api.c). */
    if (heap == &_fa_heap_empty || n > FA_CLASS_MAX)
        return _fa_malloc_slow(n, heap);
    fa_page_t *page = slot_page(heap, n);
    if (page->free != FA_LIST_END) /* a bad link at the list's head: reported there */
        return _fa_malloc_slow(n, heap);
    bool armed = page->prof_armed;
    if (armed) /* never the shared empty page, which threads' new heaps point at */
        page->prof_armed = 0;
    uint64_t placed = page->placed;
    fa_block_t *block;
    fa_page_t *from = page;
    size_t length = SIZE_MAX;
    if (page->local != FA_LIST_END) {
        fa_page_take_local(page);
        block = fa_page_pop(page);
        length = (size_t)(page->placed - placed - 1);
    } else {
        block = _fa_malloc_slow(n, heap);
        if (!block)
            return NULL;
        from = slot_page(heap, n);
        if (from == &_fa_page_empty) {
            /* A slow page (secure mode, tracing): each of its mallocs comes here. */
            size_t size = fa_bin_size(fa_bin_of(n));
            if (armed || fa_profile_charge(size))
                _fa_profile_record(block, size);
            return block;
        }
    }
    if (armed || fa_profile_charge(from->block_size))
        record(heap, block);
    hand_over(heap, from, length);
    return block;
}

/* The page pool: whole pages that left their heap with live blocks in them, one list per size
 * class, from which any heap takes a page before it opens a new one (docs/design.md, "Pages
 * shared between threads").
 *
 * A page goes there only from the heap holding it, on that heap's own slow path (heap.c:
 * move_to_full, abandon_page): no thread ever takes a page away from a heap that is using it,
 * so the owner's lists stay plain, unlocked memory. In the pool the page has no owner (owner
 * word 0, thread word 0): every free into it is a remote push onto `xfree`, which the next
 * taker, or the purger, collects. The lists are guarded by _fa_global_lock (held across fork),
 * which also orders the giver's writes to the page before the taker's reads.
 *
 * The heap that takes a page may not own the page's segment: the page is a migrant
 * (types.h) until it is released, which then only marks it free in its segment, whoever owns
 * that (heap.c: release_page).
 */
#include "common/options.h"
#include "engine/engine.h"
#include "engine/free_list.h"
#include "platform/atomic.h"

/* Oldest first: the pages pooled longest ago have had the most time to collect frees. */
static fa_page_queue_t pooled[FA_BINS]; /* linked through `next` */
static size_t pooled_count[FA_BINS];    /* read without the lock to skip an empty class */
bool _fa_pages_migrated;
uint64_t _fa_page_pool_takes; /* pages taken from the pool (the tests check it moves) */

/* Pages a taker looks at before it gives up and opens a page of its own. */
#define FA_POOL_SCAN 8

static void pool_append_locked(fa_page_t *page)
{
    fa_page_queue_t *q = &pooled[page->bin];
    page->next = page->prev = NULL;
    if (q->tail)
        q->tail->next = page;
    else
        q->head = page;
    q->tail = page;
    fa_atomic_add_relaxed(&pooled_count[page->bin], 1);
}

/* Unlink the page after `before` (NULL: the head). */
static void pool_unlink_locked(size_t bin, fa_page_t *before, fa_page_t *page)
{
    fa_page_queue_t *q = &pooled[bin];
    if (before)
        before->next = page->next;
    else
        q->head = page->next;
    if (q->tail == page)
        q->tail = before;
    page->next = NULL;
    fa_atomic_sub_relaxed(&pooled_count[bin], 1);
}

void _fa_page_pool_put(fa_page_t *page)
{
    FA_ASSERT(page->free == FA_LIST_END && !page->pinned && !page->sparse_at &&
              !page->full_offset && !page->slow && !page->mesh);
    page->migrant = 1;
    fa_atomic_store_relaxed(&page->thread, 0);
    /* From here on, frees of its blocks (ours too) are remote pushes. */
    fa_atomic_store_release(&page->owner, 0);
    fa_mutex_lock(&_fa_global_lock);
    pool_append_locked(page);
    fa_mutex_unlock(&_fa_global_lock);
    if (!fa_atomic_load_relaxed(&_fa_pages_migrated))
        fa_atomic_store_relaxed(&_fa_pages_migrated, true);
    _fa_purge_kick(); /* its sweep releases the page if every block comes back meanwhile */
}

/* Free blocks a pooled page has: on `local` (collected by the purger's sweep) or remote. */
static size_t pooled_free_blocks(const fa_page_t *page)
{
    return (size_t)(page->capacity - page->used) +
           fa_xfree_count(fa_atomic_load_relaxed(&page->xfree));
}

/* Under the lock: the first of the class's next FA_POOL_SCAN pages with blocks enough to hand
 * out (fa_page_return_blocks, as for a page on its owner's full list), unlinked; NULL if none
 * has; those passed over go to the end of the list. Oldest first: the pages pooled longest ago
 * have had the most time to collect frees. */
static fa_page_t *pool_pick_locked(size_t bin)
{
    fa_page_queue_t *q = &pooled[bin];
    for (int i = 0; q->head && i < FA_POOL_SCAN; i++) {
        fa_page_t *page = q->head;
        pool_unlink_locked(bin, NULL, page);
        if (pooled_free_blocks(page) >= fa_page_return_blocks(page))
            return page;
        pool_append_locked(page);
    }
    return NULL;
}

/* A page found empty is taken all the same: released, it would go back to its segment, which
 * another heap may own, while this one opened a page of its own. */
fa_page_t *_fa_page_pool_take(fa_heap_t *heap, size_t bin)
{
    if (!fa_atomic_load_relaxed(&pooled_count[bin]))
        return NULL;
    fa_mutex_lock(&_fa_global_lock);
    fa_page_t *page = pool_pick_locked(bin);
    fa_mutex_unlock(&_fa_global_lock);
    if (!page)
        return NULL;
    fa_atomic_add_relaxed(&_fa_page_pool_takes, 1);
    fa_atomic_store_release(&page->owner, fa_owner_word(heap, page));
    fa_page_set_thread(page, heap->thread);
    _fa_page_collect(page);
    return page;
}

void _fa_page_pool_sweep(uint64_t now, long *next)
{
    if (!fa_atomic_load_relaxed(&_fa_pages_migrated))
        return;
    bool kept = false;
    fa_mutex_lock(&_fa_global_lock);
    for (size_t bin = 0; bin < FA_BINS; bin++) {
        fa_page_t *before = NULL;
        for (fa_page_t *page = pooled[bin].head, *after; page; page = after) {
            after = page->next;
            _fa_page_collect(page);
            if (page->used == 0) {
                pool_unlink_locked(bin, before, page);
                _fa_segment_release_page(page);
            } else {
                before = page;
                kept = true;
            }
        }
    }
    fa_mutex_unlock(&_fa_global_lock);
    /* Frees into pooled pages wake nobody: look again after the purge delay. */
    if (kept)
        fa_purge_note_due(next, now + (uint64_t)fa_option(purge_delay), now);
}

/* The page pool: whole pages that left their heap, from which any heap takes a page before it
 * opens a new one (docs/design.md, "Pages shared between threads"). Two kinds of pages:
 *
 *   - pooled pages, one list per size class: pages with live blocks, given up by the heap
 *     holding them when they filled up after taking remote frees and frees of its own, or
 *     when that heap stopped allocating in their class (heap.c: shared_when_full,
 *     hand_over_idle_class, abandon_page);
 *   - emptied pages, one list for all small classes: pooled pages whose last block came back,
 *     and migrants emptied in a heap. Any heap sets one up for the class it needs. Given back to
 *     its segment, such a page would serve only the segment's owner, which may need no page
 *     while another heap opens fresh memory; kept here a purge delay, it serves whoever needs
 *     one, and the sweep gives back those nobody took.
 *
 * A page goes there only from the heap holding it, on that heap's own slow path: no thread ever
 * takes a page away from a heap that is using it, so the owner's lists stay plain, unlocked
 * memory. In the pool the page has no owner (owner word 0, thread word 0): every free into it
 * is a remote push onto `xfree`. The lists and the pooled pages' own fields are guarded by
 * _fa_global_lock (held across fork), which also orders the giver's writes to the page before
 * the taker's reads.
 *
 * The heap that takes a page may not own the page's segment: the page is a migrant (types.h)
 * until it goes back to its segment, which then only marks it free there, whoever owns that.
 *
 * Migrants mesh as any page (mesh_page.c): every block still returns to its page. Only a page's
 * holder detaches it: the heap holding it, or for a pooled page, which no heap holds, a mesh
 * pass that takes it out of the pool first (_fa_page_pool_take_sparse). A detached page is
 * never pooled: it is held by no heap, so none gives it here.
 */
#include "common/options.h"
#include "engine/engine.h"
#include "engine/free_list.h"
#include "platform/atomic.h"

/* page->pooled */
enum { FA_POOL_NONE, FA_POOL_CLASS, FA_POOL_EMPTIED };

/* Oldest first: the pages pooled longest ago have had the most time to collect frees. Linked
 * through `next` and `prev`. */
static fa_page_queue_t pooled[FA_BINS] FA_BSS_APART;
static size_t pooled_count[FA_BINS]; /* read without the lock to skip an empty class */
/* Newest first (its memory is the likeliest to be cached), linked through `next`. */
static fa_page_t *emptied;
static size_t emptied_count; /* read without the lock to skip an empty list */
bool _fa_pages_migrated;
uint64_t _fa_page_pool_takes; /* pages taken from the pool (the tests check it moves) */
uint64_t _fa_page_pool_puts;  /* pages given to the pool with live blocks (likewise) */

/* Pages a taker looks at before it gives up and opens a page of its own. */
#define FA_POOL_SCAN 8

static void pool_append_locked(fa_page_t *page)
{
    fa_page_queue_push_back(&pooled[page->bin], page);
    page->pooled = FA_POOL_CLASS;
    /* The blocks the page holds, for the remote frees that may empty it. */
    fa_atomic_store_relaxed(&page->pool_live, page->used);
    fa_atomic_add_relaxed(&pooled_count[page->bin], 1);
}

static void pool_unlink_locked(fa_page_t *page)
{
    fa_page_queue_t *q = &pooled[page->bin];
    fa_page_queue_unlink(q, page);
    page->pooled = FA_POOL_NONE;
    fa_atomic_store_relaxed(&page->pool_live, 0);
    fa_atomic_sub_relaxed(&pooled_count[page->bin], 1);
}

/* A page with no live block: no block of it is valid any more, and the sweep gives it back to
 * its segment after the purge delay unless a heap takes it first. */
static void emptied_push_locked(fa_page_t *page, uint64_t now)
{
    _fa_segment_empty_page(page);
    page->pooled = FA_POOL_EMPTIED;
    fa_atomic_store_relaxed(&page->purge_at, now + (uint64_t)fa_option(purge_delay));
    page->next = emptied;
    emptied = page;
    fa_atomic_add_relaxed(&emptied_count, 1);
}

/* A pooled page's remote frees collected: with no live block left it moves to the emptied
 * list (false), else its live count is refreshed for the frees to come (true: still pooled). */
static bool settle_locked(fa_page_t *page, uint64_t now)
{
    _fa_page_collect(page);
    if (page->used == 0) {
        pool_unlink_locked(page);
        emptied_push_locked(page, now);
        return false;
    }
    fa_atomic_store_relaxed(&page->pool_live, page->used);
    return true;
}

static void note_migrated(void)
{
    if (!fa_atomic_load_relaxed(&_fa_pages_migrated))
        fa_atomic_store_relaxed(&_fa_pages_migrated, true);
    _fa_purge_kick(); /* its sweep gives back what nobody takes meanwhile */
}

void _fa_page_pool_put(fa_page_t *page)
{
    FA_ASSERT(page->free == FA_LIST_END && !page->pinned && !page->sparse_at &&
              !page->full_offset && !page->slow && !page->mesh && page->used > 0);
    page->migrant = 1;
    fa_atomic_store_relaxed(&page->thread, 0);
    /* From here on, frees of its blocks (ours too) are remote pushes. */
    fa_atomic_store_release(&page->owner, 0);
    fa_mutex_lock(&_fa_global_lock);
    pool_append_locked(page);
    fa_mutex_unlock(&_fa_global_lock);
    fa_atomic_add_relaxed(&_fa_page_pool_puts, 1);
    note_migrated();
}

void _fa_page_pool_put_empty(fa_page_t *page)
{
    FA_ASSERT(page->migrant && page->used == 0 && !page->pinned && !page->slow && !page->mesh);
    uint64_t now = _fa_os_now_ms();
    fa_mutex_lock(&_fa_global_lock);
    emptied_push_locked(page, now);
    fa_mutex_unlock(&_fa_global_lock);
    note_migrated();
}

/* Free blocks a pooled page has: on `local` or remote. */
static size_t pooled_free_blocks(const fa_page_t *page)
{
    return (size_t)(page->capacity - page->used) +
           fa_xfree_count(fa_atomic_load_relaxed(&page->xfree));
}

/* Under the lock: the first of the class's next FA_POOL_SCAN pages with blocks enough to hand
 * out (fa_page_return_blocks, as for a page on its owner's full list), unlinked; NULL if none
 * has; those passed over go to the end of the list. */
static fa_page_t *pool_pick_locked(size_t bin)
{
    fa_page_queue_t *q = &pooled[bin];
    for (int i = 0; q->head && i < FA_POOL_SCAN; i++) {
        fa_page_t *page = q->head;
        pool_unlink_locked(page);
        if (pooled_free_blocks(page) >= fa_page_return_blocks(page))
            return page;
        pool_append_locked(page);
    }
    return NULL;
}

static fa_page_t *emptied_pop_locked(void)
{
    fa_page_t *page = emptied;
    if (!page)
        return NULL;
    emptied = page->next;
    page->next = NULL;
    page->pooled = FA_POOL_NONE;
    fa_atomic_sub_relaxed(&emptied_count, 1);
    return page;
}

/* A pooled page found empty by its taker is taken all the same (set up afresh, it would serve
 * as well); the sweep, or the free that empties it, moves it to the emptied list before. */
fa_page_t *_fa_page_pool_take(fa_heap_t *heap, size_t bin)
{
    bool small = bin < FA_SMALL_BINS;
    if (!fa_atomic_load_relaxed(&pooled_count[bin]) &&
        !(small && fa_atomic_load_relaxed(&emptied_count)))
        return NULL;
    fa_mutex_lock(&_fa_global_lock);
    fa_page_t *page = pool_pick_locked(bin);
    fa_page_t *empty = !page && small ? emptied_pop_locked() : NULL;
    fa_mutex_unlock(&_fa_global_lock);
    if (empty) {
        /* Still a migrant: its segment is not ours. */
        _fa_page_init(empty, heap, bin);
        page = empty;
    } else if (page) {
        fa_atomic_store_release(&page->owner, fa_owner_word(heap, page));
        fa_page_set_thread(page, heap->thread);
        _fa_page_collect(page);
    } else {
        return NULL;
    }
    fa_atomic_add_relaxed(&_fa_page_pool_takes, 1);
    return page;
}

/* A pooled page serves a heap that needs a page of its class; with none, it waits, and the
 * remote frees into it go on. One left sparse goes to the mesher as a heap's page would: the
 * pass takes it out of the pool here, under the lock, and detaches it (mesh_page.c). */
fa_page_t *_fa_page_pool_take_sparse(void)
{
    if (!fa_atomic_load_relaxed(&_fa_pages_migrated))
        return NULL;
    fa_page_t *taken = NULL;
    fa_mutex_lock(&_fa_global_lock);
    for (size_t bin = 0; bin < FA_SMALL_BINS; bin++) {
        if (!fa_atomic_load_relaxed(&pooled_count[bin]))
            continue;
        for (fa_page_t *page = pooled[bin].head, *after; page; page = after) {
            after = page->next;
            /* `used` counts the blocks on `xfree` too (the detach collects them). */
            size_t live = page->used - fa_xfree_count(fa_atomic_load_relaxed(&page->xfree));
            if (live == 0 || live > fa_mesh_sparse_at(page))
                continue;
            pool_unlink_locked(page);
            page->next = taken;
            taken = page;
        }
    }
    fa_mutex_unlock(&_fa_global_lock);
    return taken;
}

/* A remote free into a pooled page is the only thing that changes it: the one that brings its
 * remote count up to the blocks it held has freed its last live block. That page moves to the
 * emptied list at once, rather than wait for the sweep, so that the next heap needing a page
 * of any class takes its memory. */
void _fa_page_pool_freed(fa_page_t *page, uintptr_t xfree)
{
    uint16_t live = fa_atomic_load_relaxed(&page->pool_live);
    if (!live || fa_xfree_count(xfree) < live)
        return;
    uint64_t now = _fa_os_now_ms();
    fa_mutex_lock(&_fa_global_lock);
    /* Taken meanwhile, or already moved: no longer the pool's to change. */
    if (page->pooled == FA_POOL_CLASS)
        settle_locked(page, now);
    fa_mutex_unlock(&_fa_global_lock);
}

void _fa_page_pool_sweep(uint64_t now, bool force, long *next)
{
    if (!fa_atomic_load_relaxed(&_fa_pages_migrated))
        return;
    bool kept = false;
    fa_mutex_lock(&_fa_global_lock);
    for (size_t bin = 0; bin < FA_BINS; bin++) {
        for (fa_page_t *page = pooled[bin].head, *after; page; page = after) {
            after = page->next;
            if (settle_locked(page, now))
                kept = true;
        }
    }
    for (fa_page_t **link = &emptied, *page; (page = *link);) {
        uint64_t due = fa_atomic_load_relaxed(&page->purge_at);
        if (force || due <= now) {
            *link = page->next;
            page->next = NULL;
            page->pooled = FA_POOL_NONE;
            fa_atomic_sub_relaxed(&emptied_count, 1);
            _fa_segment_release_page(page);
        } else {
            fa_purge_note_due(next, due, now);
            link = &page->next;
        }
    }
    fa_mutex_unlock(&_fa_global_lock);
    /* Frees into pooled pages wake nobody but for a page's last: look again after the delay. */
    if (kept)
        fa_purge_note_due(next, now + (uint64_t)fa_option(purge_delay), now);
}

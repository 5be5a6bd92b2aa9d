/* Invariant checker for thread heaps and their pages (debug and sanitizer builds: FA_DEBUG).
 * A broken invariant aborts with a message naming the page; see docs/design.md. */
#include "engine/free_list.h"
#include "platform/atomic.h"

#define REQUIRE(cond, page, what)                                                                  \
    do {                                                                                           \
        if (!(cond))                                                                               \
            _fa_fatal("fitalloc: heap corrupted: %s (page %p, %s:%d)\n", what, (void *)(page),     \
                      __FILE__, __LINE__);                                                         \
    } while (0)

static size_t list_length(const fa_page_t *page, const fa_block_t *b)
{
    size_t count = 0;
    for (; b != FA_LIST_END; b = fa_link_decode(b->link)) {
        REQUIRE(fa_page_has_block(page, (uintptr_t)b), page, "free list entry is not a block");
        REQUIRE(b->mark == fa_page_mark(page), page, "free block not marked free");
        REQUIRE(++count <= page->capacity, page, "free list longer than the page");
    }
    return count;
}

static void check_page(const fa_heap_t *heap, const fa_page_t *page, bool full)
{
    uintptr_t owner = fa_owner_word(heap, page) | (full ? FA_OWNER_FULL : 0);
    REQUIRE(fa_atomic_load_relaxed(&page->owner) == owner, page, "owner word");
    uintptr_t thread = fa_page_frees_slowly(page) ? 0 : heap->thread;
    uintptr_t word = fa_atomic_load_relaxed(&page->thread);
    /* A big page takes its thread word back at its owner's first free after guard.c is done;
     * a full page may have none (it then comes back at its next free). */
    REQUIRE(word == thread || (word == 0 && (full || page->bin >= FA_MEDIUM_BINS)), page,
            "thread word");
    REQUIRE(fa_atomic_load_relaxed(&page->state) == FA_PAGE_USED, page, "page state");
    REQUIRE(page->capacity <= page->reserved, page, "capacity beyond the page");
    size_t on_free = list_length(page, page->free), on_local = list_length(page, page->local);
    /* used counts live blocks (and remote frees not yet collected), the blocks on free, and the
     * pin, less the sparse trigger (fa_page_count). */
    size_t count = fa_page_count(page);
    REQUIRE(count >= on_free, page, "used below the free list");
    REQUIRE(on_local + count <= page->capacity, page, "blocks counted twice");
    REQUIRE(count > 0 || page->pinned, page, "empty page still queued");
    REQUIRE(!page->sparse_at || (!page->pinned && count > page->sparse_at), page,
            "sparse trigger on a head or past its point");
    REQUIRE(!full || (page->free == FA_LIST_END && !page->pinned && !page->sparse_at), page,
            "full page with blocks to hand out");
    /* The owner's frees gather on a full page's `local` until the point move_to_full set. */
    REQUIRE(!full || page->local == FA_LIST_END || page->full_offset != 0, page,
            "full page with freed blocks past its return point");
    REQUIRE(full || !page->full_offset, page, "full_offset off the full list");
}

static void check_queue(const fa_heap_t *heap, const fa_page_queue_t *q, bool full)
{
    const fa_page_t *prev = NULL;
    for (const fa_page_t *page = q->head; page; prev = page, page = page->next) {
        REQUIRE(page->prev == prev, page, "queue links");
        REQUIRE(full || page->pinned == (page == q->head), page, "only the head is pinned");
        check_page(heap, page, full);
    }
    REQUIRE(q->tail == prev, prev, "queue tail");
}

void _fa_heap_check(const fa_heap_t *heap)
{
    if (heap == &_fa_heap_empty)
        return;
    for (size_t bin = 0; bin < FA_BINS; bin++) {
        check_queue(heap, &heap->queues[bin], false);
        for (const fa_page_t *page = heap->queues[bin].head; page; page = page->next)
            REQUIRE(page->bin == bin, page, "page in the wrong class queue");
    }
    check_queue(heap, &heap->full, true);
    for (int kind = 0; kind < FA_SEG_LARGE; kind++)
        for (const fa_segment_t *seg = heap->segments[kind]; seg; seg = seg->next) {
            REQUIRE(seg->heap == heap && seg->kind == kind, seg, "segment owner or kind");
            size_t used = 0;
            for (size_t i = 0; i < seg->page_count; i++)
                used += fa_atomic_load_relaxed(&seg->pages[i].state) == FA_PAGE_USED;
            /* With meshing, the mesher releases detached pages of any segment while this walk
             * runs (the page's state, then the count), and so do the heaps holding migrants
             * (page_pool.c): the two agree only when neither runs. */
            REQUIRE(_fa_mesh_on || fa_atomic_load_relaxed(&_fa_pages_migrated) ||
                        used == fa_atomic_load_relaxed(&seg->used_pages),
                    seg, "segment used-page count");
        }
}

void _fa_heap_check_sometimes(const fa_heap_t *heap)
{
    /* A full walk costs O(blocks): do it on every 64th slow-path call of a thread, which still
     * catches a broken invariant within a few operations of the fault in the tests. */
    static __thread unsigned tick __attribute__((tls_model("initial-exec")));
    if (tick++ % 64 == 0)
        _fa_heap_check(heap);
}

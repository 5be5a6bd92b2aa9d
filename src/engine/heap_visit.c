/* fa_heap_visit (fitalloc-stats.h): the pages in use of the segment registry, then the live
 * large blocks. Nothing here allocates.
 *
 * Pages: the registry holds every small and medium segment (owned, abandoned or cached) and is
 * walked under _fa_global_lock, the one lock the visit takes, so it cannot deadlock with the
 * purger (which takes its pass lock, then this one) or an owner (which takes it alone, briefly).
 * Small and medium segments are never unmapped, so reading a page another thread is changing
 * reads a stale value at worst.
 * Large blocks: large.c keeps the live ones on a list under the same lock.
 */
#include "fitalloc-stats.h"
#include "engine/free_list.h"
#include "engine/mesh.h"
#include "platform/atomic.h"

struct visit {
    fa_heap_visit_fn fn;
    void *arg;
    const fa_heap_t *mine;
    int areas;
};

/* Other threads' page fields are read as they are, on purpose (a snapshot, like stats.c). */
__attribute__((no_sanitize("thread"))) static void visit_page(const fa_page_t *page, void *arg)
{
    struct visit *v = arg;
    uintptr_t owner = fa_atomic_load_acquire(&page->owner);
    const fa_heap_t *heap = fa_owner_heap(owner);
    size_t used = fa_page_count(page), block_size = page->block_size;
    size_t capacity = page->reserved;
    /* A page without an owner and without a block in use is being set up or given back
     * right now (an abandoned page keeps at least one block, or it is released). */
    if ((!heap && used == 0) || block_size == 0)
        return;
    /* The blocks on `free` are not live. */
    size_t not_live = fa_page_free_length(page) + _fa_guard_held_in(page);
    used = used >= not_live ? used - not_live : 0;
    /* Records are never unmapped; the mesher may change one meanwhile (a snapshot). */
    const fa_mesh_page_t *rec = fa_atomic_load_acquire(&page->mesh);
    struct fa_heap_area area = {
        .kind = FA_AREA_PAGE,
        .mine = heap == v->mine,
        .owner = (uintptr_t)heap,
        .start = (void *)page->start,
        .size = capacity * block_size,
        .block_size = block_size,
        .capacity = capacity,
        .used = used < capacity ? used : capacity,
        .shared = rec ? (size_t)rec->shared * FA_MESH_FRAME : 0,
        .returned = rec ? (size_t)__builtin_popcount(rec->returned) * FA_MESH_FRAME : 0,
    };
    v->fn(&area, v->arg);
    v->areas++;
}

/* Under _fa_global_lock (large.c): no thread can unmap the block meanwhile; its size may
 * change under a realloc in place, read as it is. */
__attribute__((no_sanitize("thread"))) static void visit_large(const fa_segment_t *seg, void *arg)
{
    struct visit *v = arg;
    size_t usable = seg->large_usable;
    struct fa_heap_area area = {
        .kind = FA_AREA_LARGE,
        .start = (void *)seg->large_block,
        .size = usable,
        .block_size = usable,
        .capacity = 1,
        .used = 1,
    };
    v->fn(&area, v->arg);
    v->areas++;
}

FA_API int fa_heap_visit(fa_heap_visit_fn fn, void *arg)
{
    if (!fn)
        return -1;
    struct visit v = {.fn = fn, .arg = arg, .mine = _fa_heap_tls};
    _fa_pages_foreach(visit_page, &v);
    _fa_large_foreach(visit_large, &v);
    return v.areas;
}

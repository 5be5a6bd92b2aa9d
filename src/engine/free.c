/* free: the out-of-line half (the fast path is in fastpath.h). */
#include "engine/fastpath.h"
#include "engine/mesh.h"
#include "engine/mode_pages.h"
#include "profile/profile.h"
#include "platform/atomic.h"

__attribute__((noinline)) void _fa_free_reached_zero(fa_page_t *page)
{
    fa_heap_t *heap = _fa_heap_tls;
    _fa_heap_requeue(heap, page);
    FA_CHECK_HEAP(heap);
    _fa_purge_safe_point(heap);
}

/* A block that carries the free mark is free for certain when its link also decodes to the
 * end of a list or to a block of its page: a live block holding the mark by chance (the
 * program's data) almost never also holds a valid encoded link. */
bool _fa_block_is_free(const fa_page_t *page, const fa_block_t *block)
{
    if (block->mark != fa_page_mark(page))
        return false;
    fa_block_t *next = fa_link_decode(block->link);
    return next == FA_LIST_END || fa_page_has_block(page, (uintptr_t)next);
}

/* Push a block onto the lock-free remote list of a page the thread does not own. */
static void push_remote(fa_page_t *page, fa_block_t *block)
{
    block->mark = fa_page_mark(page);
    uintptr_t head = fa_atomic_load_relaxed(&page->xfree), pushed;
    do {
        block->link = fa_link_encode(fa_xfree_head(head));
        pushed = fa_xfree_push(head, block);
    } while (!fa_atomic_cas_weak_seq_cst(&page->xfree, &head, pushed));
    /* Sequentially consistent with the owner's move_to_full (heap.c): either it sees our
     * block, or we see the full mark and tell it. */
    uintptr_t owner = fa_atomic_load_seq_cst(&page->owner);
    if (owner & FA_OWNER_FULL)
        _fa_heap_notify(page);
    else if (fa_unlikely(owner == 0))
        _fa_page_pool_freed(page, pushed); /* a pooled page's last block frees its memory */
}

/* A free from a thread that does not own the page. */
static void free_remote(fa_page_t *page, fa_block_t *block)
{
    /* Counted by the freeing thread, without an atomic: stats.c reconciles it with what
     * owners collect. A thread that only frees (a consumer) gets a heap for its counters at
     * its first remote free: a shared atomic counter here was the bottleneck of
     * producer/consumer programs. Only without one do we count in the shared counters. */
    fa_heap_t *heap = _fa_heap_for_counting();
    if (fa_likely(heap != NULL))
        heap->remote_frees[page->bin]++;
    else
        fa_atomic_add_relaxed(&_fa_counters.remote_frees[page->bin], 1);
    push_remote(page, block);
}

/* Push a block of the thread's own page onto its free list, as the fast path does. */
static void free_local(fa_heap_t *heap, fa_page_t *page, fa_block_t *block)
{
    FA_ASSERT(fa_owner_heap(fa_atomic_load_relaxed(&page->owner)) == heap && page->used > 0);
    block->mark = fa_page_mark(page);
    block->link = fa_link_encode(page->local);
    page->local = block;
    if (fa_atomic_load_relaxed(&page->owner) & FA_OWNER_FULL) {
        /* Back to its queue at the point move_to_full set, or at once when the page has no
         * thread word, as the fast path then sends every free of it here. */
        if (--page->used != 0 && fa_atomic_load_relaxed(&page->thread) != 0)
            return;
        _fa_heap_local_free_full(heap, page);
        FA_CHECK_HEAP(heap);
        _fa_purge_safe_point(heap);
    } else if (--page->used == 0) {
        _fa_free_reached_zero(page);
    }
}

/* The fast path found the free mark on a block of the thread's own page. */
void _fa_free_marked(void *p, fa_page_t *page, const char *caller)
{
    if (_fa_block_is_free(page, p))
        _fa_double_free(caller, p, page->block_size);
    free_local(_fa_heap_tls, page, p);
}

/* p lies in seg's page `page` (found by the fast path) but is not a local free into a page
 * with free blocks: validate it, then free it remotely, into our full page, or as a large block. */
static void free_in_page(void *p, fa_segment_t *seg, fa_page_t *page, const char *caller,
                         size_t size)
{
    if (seg->kind == FA_SEG_LARGE) {
        if (seg->large_block != (uintptr_t)p)
            _fa_bad_pointer(caller, p);
        const struct fa_mode_pages *own = fa_mode_pages_of(seg);
        if (own)
            own->large_check(seg, caller, size);
        if (fa_unlikely(_fa_profiling))
            _fa_profile_forget(p);
        _fa_large_free(seg);
        _fa_purge_start_point();
        return;
    }
    if (fa_atomic_load_acquire(&page->state) != FA_PAGE_USED ||
        !fa_page_has_block(page, (uintptr_t)p))
        _fa_bad_pointer(caller, p);
    /* A block guard.c keeps is free, and cannot be read. (Another thread's free of it, which
     * takes the usual case of _fa_free_in_page, faults reading it.) */
    if (fa_guard_holds(page, p) || _fa_block_is_free(page, p))
        _fa_double_free(caller, p, page->block_size);
    /* A detached page keeps no marks on its free blocks (mesh.h): its bitmap says. */
    fa_mesh_page_t *mesh = fa_atomic_load_acquire(&page->mesh);
    if (mesh && !fa_mesh_live(mesh, fa_mesh_slot(page, (uintptr_t)p)))
        _fa_double_free(caller, p, page->block_size);
    /* A block the profiler may have sampled: a slow page's, or one its page's filter names
     * (profile_pages.c sets it for every block it samples of the other pages). */
    if (fa_unlikely(_fa_profiling) && (page->slow || fa_page_maybe_sampled(page, p)) &&
        _fa_profile_forget(p))
        fa_atomic_sub_relaxed(&page->prof_sampled, 1);
    const struct fa_mode_pages *own = fa_mode_pages_of(page);
    if (own)
        own->free(page, p, caller, size);
    else if (!_fa_guard_free(page, p))
        _fa_free_block(page, p);
}

void _fa_free_block(fa_page_t *page, fa_block_t *block)
{
    fa_heap_t *heap = _fa_heap_tls;
    fa_heap_t *owner = fa_owner_heap(fa_atomic_load_relaxed(&page->owner));
    /* A thread whose first call frees a block of a parked heap takes that heap: it is most
     * likely carrying on the ended thread's work (and its blocks), as a server's new worker
     * does. */
    if (fa_unlikely(heap == &_fa_heap_empty) && owner && _fa_heap_take_parked(owner))
        heap = owner;
    if (owner != heap)
        free_remote(page, block);
    else
        free_local(heap, page, block);
}

/* A page holding a block the profiler sampled (profile_pages.c: FA_OWNER_SLOW in the owner
 * word of a page that is not slow, thread word 0) sends every free of it out of the fast path;
 * its filter tells the sampled blocks' frees from the others, which are freed here as the fast
 * path and the remote path would, without the checked path's lookup in the profiler's table.
 * false: not such a free (nor a detached or abandoned page's, a big page's, which guard.c may
 * hold, or a free by a thread with no heap yet). */
static bool free_unsampled(void *p, fa_page_t *page, uintptr_t owner, fa_heap_t *heap,
                           const char *caller)
{
    fa_heap_t *owner_heap = fa_owner_heap(owner);
    if (page->slow || !owner_heap || heap == &_fa_heap_empty || page->bin >= FA_MEDIUM_BINS ||
        !fa_page_has_block(page, (uintptr_t)p) || fa_page_maybe_sampled(page, p))
        return false;
    if (_fa_block_is_free(page, p))
        _fa_double_free(caller, p, page->block_size);
    if (owner_heap == heap) {
        free_local(heap, page, p);
    } else {
        heap->remote_frees[page->bin]++;
        push_remote(page, p);
    }
    return true;
}

/* free_unsampled's usual case, shorter: the owner's free into its page not on the full list
 * (its owner word is the heap's, FA_OWNER_SLOW only), pushed as the inline fast path pushes. */
static inline bool free_own_unsampled(void *p, fa_page_t *page, const char *caller)
{
    if (page->slow || page->bin >= FA_MEDIUM_BINS || !fa_page_has_block(page, (uintptr_t)p) ||
        fa_page_maybe_sampled(page, p))
        return false;
    fa_block_t *block = p;
    if (fa_unlikely(block->mark == fa_page_mark(page)) && _fa_block_is_free(page, p))
        _fa_double_free(caller, p, page->block_size);
    fa_push_own(page, block);
    return true;
}

/* _fa_free_in_page past its usual case: the trace (every free of a traced process's slow pages
 * comes here), then every check (apart, so that the usual case saves no registers). */
static __attribute__((noinline)) void free_in_page_checked(void *p, fa_page_t *page,
                                                           const char *caller, size_t size)
{
    fa_segment_t *seg = (fa_segment_t *)((uintptr_t)p & ~FA_SEG_MASK);
    FA_TRACED_FREE(free_in_page(p, seg, page, caller, size), p, caller, size);
}

void _fa_free_in_page(void *p, fa_page_t *page, const char *caller, size_t size)
{
    /* The usual case first, with only the checks it needs: a block of another thread's page,
     * freed by a thread that has a heap to count in. A slow page (secure mode; every page
     * while tracing, which is decided before the first page exists) goes to the full checks,
     * as do a page given back or never used and a large block's page (limit 0: the block test
     * fails). */
    uintptr_t owner = fa_atomic_load_relaxed(&page->owner);
    fa_heap_t *heap = _fa_heap_tls;
    if (fa_likely(fa_owner_heap(owner) != heap && !(owner & FA_OWNER_SLOW) &&
                  heap != &_fa_heap_empty && fa_page_has_block(page, (uintptr_t)p))) {
        if (fa_unlikely(_fa_block_is_free(page, p)))
            _fa_double_free(caller, p, page->block_size);
        heap->remote_frees[page->bin]++;
        push_remote(page, p);
        return;
    }
    /* Not in the secure library, whose mode's pages are all slow (mode_pages.h): the test
     * would cost every free of secure mode's pair. */
    if (!FA_MODE_PAGES && fa_unlikely(owner & FA_OWNER_SLOW) &&
        (owner == ((uintptr_t)heap | FA_OWNER_SLOW) ? free_own_unsampled(p, page, caller)
                                                    : free_unsampled(p, page, owner, heap, caller)))
        return;
    free_in_page_checked(p, page, caller, size);
}

/* Everything the fast path could not place in a page: NULL, foreign pointers, the interior
 * chunks of a large block aligned beyond 2 MiB, the mode's blocks outside the core's segments
 * (in lab mode, every free). */
static void free_slow(void *p, const char *caller, size_t size)
{
    if (!p)
        return;
    if (_fa_mode->owns && _fa_mode->owns(p)) {
        _fa_mode->free(p, caller, size);
        return;
    }
    fa_page_t *page;
    fa_segment_t *seg = _fa_segment_of_block(p, &page);
    if (!seg)
        _fa_bad_pointer(caller, p);
    free_in_page(p, seg, page, caller, size);
}

void _fa_free_slow(void *p, const char *caller, size_t size)
{
    FA_TRACED_FREE(free_slow(p, caller, size), p, caller, size);
}

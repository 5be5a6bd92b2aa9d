/* malloc, calloc and realloc: the out-of-line paths and the C semantics, untraced (the entry
 * points, override/entry.c, record the calls while tracing). */
#include <errno.h>
#include <string.h>

#include "fitalloc-trace.h"
#include "engine/fastpath.h"
#include "engine/mode_pages.h"
#include "engine/size_class.h"
#include "profile/profile.h"

/* The block the core's malloc past the fast paths handed out last, if it came off a `free` list
 * of zero memory (types.h: free_zero), else NULL: calloc, which reaches that malloc through
 * the mode's table, does not clear it. Read right after the call: a malloc made inside it
 * (the purger's start) leaves another block here, never that one. */
static __thread fa_block_t *zero_block __attribute__((tls_model("initial-exec")));

/* The core's malloc past the fast paths (common/mode.h): the thread's heap, made at its first
 * call, then a page of the class, or a large block. */
void *_fa_core_malloc(size_t n)
{
    fa_heap_t *heap = _fa_heap_tls;
    if (fa_unlikely(heap == &_fa_heap_empty)) {
        /* A heap parked by an ended thread comes with free blocks at hand. */
        heap = _fa_heap_init_thread();
        if (!heap) {
            errno = ENOMEM;
            return NULL;
        }
    }
    if (n > FA_CLASS_MAX)
        return _fa_large_alloc(n, FA_ALIGN, false);
    fa_page_t *page = _fa_heap_find_page(heap, fa_bin_of(n));
    if (!page) {
        errno = ENOMEM;
        return NULL;
    }
    fa_block_t *block = fa_page_pop(page);
    zero_block = page->free_zero ? block : NULL;
    FA_CHECK_HEAP(heap);
    _fa_purge_safe_point(heap);
    return block;
}

static void *malloc_generic(size_t n, fa_heap_t *heap)
{
    /* The fast path lands here with a list head it must not follow: say so if it is not
     * simply the end of the list. */
    if (heap != &_fa_heap_empty && n <= FA_DIRECT_MAX) {
        fa_page_t *direct = heap->direct[n];
        if (direct->free != FA_LIST_END)
            _fa_free_list_corrupt(direct, "free list");
    }
    return _fa_mode->malloc(n);
}

/* malloc past its page's lists: the thread's heap, a new page, a large block, the mode. */
static inline __attribute__((always_inline)) void *malloc_slow(size_t n, fa_heap_t *heap)
{
    /* A thread's first call starts the process first: that decides whether it is traced. */
    if (fa_unlikely(heap == &_fa_heap_empty))
        _fa_process_init();
    /* Every malloc of a traced process comes here: its pages are slow. */
    return FA_TRACED(void *, malloc_generic(n, heap), FA_TRACE_MALLOC, n, 0, NULL, traced);
}

/* With the heap profiler on, a list is counted as it is handed to the fast path
 * (profile_pages.c). The usual case here, inline: the block and the list behind it lie before
 * the thread's sample point; the rest (a sample, a list to cut, a page whose sampled blocks are
 * all freed, to make fast again, a slow page) in _fa_profile_served. */
static inline __attribute__((always_inline)) void *
profile_served(fa_heap_t *heap, size_t n, fa_page_t *page, fa_block_t *block, bool armed)
{
    uint64_t fresh = page->placed - page->prof_placed;
    int64_t bytes = (int64_t)((fresh + (fresh == 0)) * page->block_size);
    if (fa_likely(!armed && bytes < _fa_profile_self.left && page != &_fa_page_empty &&
                  (!page->prof_slow || fa_atomic_load_acquire(&page->prof_sampled)))) {
        _fa_profile_self.left -= bytes;
        page->prof_placed = page->placed;
        return block;
    }
    return _fa_profile_served(heap, n, page, block, armed);
}

/* A malloc past the inline pop with the profiler on, whose slot's page has its own frees to
 * hand over: apart from malloc_profiled, as nothing here needs registers kept across a call. */
static FA_COLD void *malloc_profiled_local(size_t n, fa_heap_t *heap, fa_page_t *page)
{
    fa_profile_safe_point();
    bool armed = page->prof_armed;
    if (armed)
        page->prof_armed = 0;
    fa_page_take_local(page);
    return profile_served(heap, n, page, fa_page_pop(page), armed);
}

/* The same past the page's lists: the slow path, then the list handed over is counted. */
static FA_COLD void *malloc_profiled(size_t n, fa_heap_t *heap, fa_page_t *page)
{
    fa_profile_safe_point();
    /* A thread's first call, large blocks (large.c counts them), the lab (lab_api.c), and a
     * bad link at the list's head (the slow path reports it). */
    if (heap == &_fa_heap_empty || n > FA_CLASS_MAX || page->free != FA_LIST_END)
        return malloc_slow(n, heap);
    bool armed = page->prof_armed;
    if (armed) /* never the shared empty page, which threads' new heaps point at */
        page->prof_armed = 0;
    fa_block_t *block = malloc_slow(n, heap);
    if (!block)
        return NULL;
    page = n <= FA_DIRECT_MAX ? heap->direct[n] : heap->bin_page[fa_bin_of(n)];
    return profile_served(heap, n, page, block, armed);
}

void *_fa_malloc_generic(size_t n, fa_heap_t *heap)
{
    fa_page_t *page = n <= FA_DIRECT_MAX  ? heap->direct[n]
                      : n <= FA_CLASS_MAX ? heap->bin_page[fa_bin_of(n)]
                                          : &_fa_page_empty;
    /* The page's `free` ran out: its own frees become the blocks to pop. And the sizes above
     * the direct slots pop as the inline fast path does, through their class's page: an empty
     * heap's, a slow page's and an empty list's slot says NULL. With the heap profiler on, a
     * list is counted as it is handed to the fast path (profile_pages.c). */
    if (page->free == FA_LIST_END && page->local != FA_LIST_END) {
        if (fa_unlikely(_fa_profiling))
            return malloc_profiled_local(n, heap, page);
        fa_page_take_local(page);
    }
    if (n > FA_DIRECT_MAX || page->free != FA_LIST_END) {
        fa_block_t *block = fa_direct_pop(page);
        if (fa_likely(block != NULL))
            return block;
    }
    if (fa_unlikely(_fa_profiling))
        return malloc_profiled(n, heap, page);
    return malloc_slow(n, heap);
}

/* The usable size of the block p starts, with its segment and (small and medium) page. */
static size_t usable_size(const void *p, const char *caller, fa_segment_t **seg_out,
                          fa_page_t **page_out)
{
    fa_page_t *page;
    fa_segment_t *seg = _fa_segment_of_block(p, &page);
    *seg_out = seg;
    *page_out = page;
    if (!seg)
        _fa_bad_pointer(caller, p);
    if (seg->kind == FA_SEG_LARGE) {
        if (seg->large_block != (uintptr_t)p)
            _fa_bad_pointer(caller, p);
        return seg->large_usable;
    }
    const struct fa_mode_pages *own = fa_mode_pages_of(page);
    return own ? own->usable(page, p, caller) : page->block_size;
}

void *_fa_calloc(size_t count, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(count, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    if (total > FA_CLASS_MAX)
        return _fa_mode->large(total, FA_ALIGN, true);
    /* malloc's paths, with a look at whether the block comes from zero memory: then only its
     * link word is written (the pop cleared its mark), as glibc and mimalloc leave memory fresh
     * from the kernel alone (record 124). */
    fa_heap_t *heap = _fa_heap_tls;
    fa_page_t *page =
        total <= FA_DIRECT_MAX ? heap->direct[total] : heap->bin_page[fa_bin_of(total)];
    fa_block_t *block = fa_direct_pop(page);
    bool zero = block && page->free_zero;
    if (!block) {
        zero_block = NULL;
        block = _fa_malloc_generic(total, heap);
        zero = block && block == zero_block;
    }
    if (zero)
        block->link = 0;
    else if (block)
        memset(block, 0, total);
    return block;
}

/* realloc of one of the core's blocks without a move where it can: the block kept when the new
 * size fits and does not waste more than half of it, or a large block's mapping resized; NULL:
 * it moves. */
static void *resize_in_place(fa_segment_t *seg, void *p, size_t n, size_t usable, bool large)
{
    /* A large block in a reused bigger mapping counts its request, not the slack after it,
     * so that a buffer growing into that slack is not taken for a shrink and trimmed. */
    size_t held = large ? usable - seg->large_slack : usable;
    if (n <= usable && (n >= held / 2 || usable <= 64)) {
        if (large && n > held)
            _fa_large_grew_in_place(seg, n);
        return p;
    }
    /* A large block shrunk into the classes moves to a block of its class; one that grows
     * resizes its mapping, whatever its size. */
    if (!large || (n <= FA_CLASS_MAX && n <= usable))
        return NULL;
    void *q = _fa_large_realloc(seg, n);
    /* Moved or resized: for the profiler, a free and a new allocation. */
    if (fa_unlikely(_fa_profiling) && q) {
        _fa_profile_forget(p);
        if (fa_profile_charge(n))
            _fa_profile_record(q, n);
    }
    return q;
}

void *_fa_realloc(void *p, size_t n)
{
    if (!p)
        return fa_malloc_inline(n);
    if (n == 0) {
        /* glibc's behaviour: free and return NULL. */
        fa_free_inline(p, "realloc", 0);
        return NULL;
    }
    if (_fa_mode->owns && _fa_mode->owns(p))
        return _fa_mode->realloc(p, n);
    fa_segment_t *seg;
    fa_page_t *page;
    size_t usable = usable_size(p, "realloc", &seg, &page);
    bool large = seg->kind == FA_SEG_LARGE;
    if (!large && (fa_guard_holds(page, p) || _fa_block_is_free(page, p)))
        _fa_double_free("realloc", p, usable);
    const struct fa_mode_pages *own = large ? fa_mode_pages_of(seg) : fa_mode_pages_of(page);
    void *q = own ? own->realloc(seg, page, p, n) : resize_in_place(seg, p, n, usable, large);
    if (q)
        return q;
    /* A block of the core's that grows past the medium classes moves to a mapping of its own,
     * as a large block: a buffer grown step by step (a string doubled by realloc) then grows on
     * by mremap, in place and without a copy, and its steps reuse one mapping, where each step
     * through the big classes took a block of another 2 MiB page and left the last one resident
     * there (record 075). */
    bool grows_past_medium = !own && n > usable && n > FA_MEDIUM_MAX;
    q = grows_past_medium ? _fa_large_alloc(n, FA_ALIGN, false) : fa_malloc_inline(n);
    if (!q)
        return NULL;
    memcpy(q, p, n < usable ? n : usable);
    fa_free_inline(p, "realloc", 0);
    if (!own && !large)
        _fa_heap_realloc_left(_fa_heap_tls, page);
    return q;
}

size_t _fa_usable_size_generic(const void *p)
{
    fa_segment_t *seg;
    fa_page_t *page;
    if (p && _fa_mode->owns && _fa_mode->owns(p))
        return _fa_mode->usable_size(p);
    return p ? usable_size(p, "malloc_usable_size", &seg, &page) : 0;
}

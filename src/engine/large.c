/* Large blocks (above the largest size class): one mapping each.
 *
 *   base (4 MiB aligned, or aligned to the alignment asked if larger)
 *   | segment header | ... | block (base + offset) ................ | end of mapping
 *
 * The segment map marks base's chunk as a segment, so free finds the header by masking the
 * pointer, as for pages. A block aligned to more than 2 MiB may start in a later chunk: those
 * chunks are marked "interior" and the header is found by walking back. Mappings come from,
 * and go back to, large_source.c; each heap keeps the one its thread freed last (hot). realloc
 * grows a mapping with mremap, in place when the address space after it is free.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/mode_pages.h"
#include "profile/profile.h"
#include "common/options.h"
#include "platform/atomic.h"

/* The live large blocks, linked through their segments' next and prev (unused while a block
 * is live), under _fa_global_lock: fa_heap_visit reads their headers while no thread can
 * unmap them. */
static fa_segment_t *live;

/* A plain increment of a statistics counter that only code holding _fa_global_lock changes:
 * no atomic read-modify-write, whose cache line threads allocating large blocks would pass
 * back and forth. */
#define fa_count_locked(name)                                                                      \
    fa_atomic_store_relaxed(&_fa_counters.name, fa_atomic_load_relaxed(&_fa_counters.name) + 1)

static void live_link(fa_segment_t *seg)
{
    fa_mutex_lock(&_fa_global_lock);
    fa_segment_list_push(&live, seg);
    fa_mutex_unlock(&_fa_global_lock);
}

static void live_unlink(fa_segment_t *seg)
{
    fa_mutex_lock(&_fa_global_lock);
    fa_segment_list_remove(&live, seg);
    fa_mutex_unlock(&_fa_global_lock);
}

void _fa_large_foreach(void (*fn)(const fa_segment_t *seg, void *arg), void *arg)
{
    fa_mutex_lock(&_fa_global_lock);
    for (const fa_segment_t *seg = live; seg; seg = seg->next)
        if (fa_atomic_load_acquire(&seg->large_block)) /* 0: freed, kept by its thread */
            fn(seg, arg);
    fa_mutex_unlock(&_fa_global_lock);
}

/* Mark or unmark the chunks from base up to the block's chunk. */
static void map_block(fa_segment_t *seg, bool present)
{
    size_t chunks = ((seg->large_block - (uintptr_t)seg) >> FA_SEG_SHIFT) + 1;
    if (present)
        _fa_segmap_add(seg, chunks);
    else
        _fa_segmap_remove(seg, chunks);
}

/* Zero [from, to) of seg's mapping, which holds old data; the first byte after it that is
 * fresh (zero, not resident). A program that uses its large blocks whole gets it cleared in
 * place (its pages stay: no fault). Otherwise most of it may never be touched: the kernel drops
 * the whole pages (they read as zero and cost nothing until touched), which costs in proportion
 * to the pages resident, not to the size, and leaves the block as good as fresh to watch. */
static size_t clear_old(fa_segment_t *seg, size_t from, size_t to, bool whole)
{
    char *base = (char *)seg;
    size_t inner_from = fa_align_up(from, FA_OS_PAGE), inner_to = to & ~(FA_OS_PAGE - 1);
    if (whole || inner_to <= inner_from) {
        memset(base + from, 0, to - from);
        return to;
    }
    memset(base + from, 0, inner_from - from);
    _fa_os_purge(base + inner_from, inner_to - inner_from);
    memset(base + inner_to, 0, to - inner_to);
    return inner_from;
}

/* The freed block's mapping to the source (`expired`: a hot mapping that has waited the purge
 * delay already, to the OS), or to secure mode's quarantine. */
static void release(fa_segment_t *seg, bool expired)
{
    map_block(seg, false);
    _fa_large_set_slack(seg, 0);
    /* One lock: the block leaves the live list, is recorded and counted as freed. Counters
     * updated next to each other under the lock share a cache line the lock brought along. */
    fa_mutex_lock(&_fa_global_lock);
    fa_segment_list_remove(&live, seg);
    _fa_large_freed(seg->large_block, seg->large_usable);
    fa_count_locked(large_frees);
    fa_count(large_in_use, -(uint64_t)seg->large_usable);
    fa_mutex_unlock(&_fa_global_lock);
    const struct fa_mode_pages *own = fa_mode_pages_of(seg);
    if (own)
        own->large_release(seg);
    else
        _fa_large_give(seg, expired);
}

/* A thread that frees a large block and then asks for one of about the same size (a buffer
 * per request, per file, per iteration) would pass the mapping through the shared cache each
 * time: a lock, the live list and the statistics' counters, whose cache lines other threads
 * doing the same pull away. Instead its heap keeps the one large block it freed last, still
 * mapped, on the live list and in the segment map, for its next large malloc; no shared word
 * is written on the way. Its header names no block (large_block 0: heap walks skip it) and the
 * block freed (large_prev), so a second free of that block, or a realloc of it, finds it and is
 * reported as a double free like any other freed large block's (report.c). The purger gives a
 * hot mapping that has waited the purge delay back to the OS, as it does any freed memory
 * (timed from the first pass that sees it). Only blocks of
 * up to a sixteenth of FITALLOC_LARGE_CACHE are kept this way (their mappings also hold the
 * header's page and the page a reused block moves by), so what threads hold so is bounded by
 * their number times that. */
static bool hot_put(fa_segment_t *seg)
{
    fa_heap_t *heap = _fa_heap_tls;
    if (heap == &_fa_heap_empty || fa_atomic_load_relaxed(&heap->large_hot) ||
        !_fa_large_reusable(seg) ||
        seg->mapped > (size_t)fa_option(large_cache) / 16 + 2 * FA_OS_PAGE)
        return false;
    /* Not timed here (a clock read per free): the purger's next pass stamps it. */
    fa_atomic_store_relaxed(&seg->cached_at, 0);
    seg->large_prev = seg->large_block;
    fa_atomic_store_relaxed(&seg->large_block, 0);
    fa_atomic_store_release(&heap->large_hot, seg);
    _fa_purge_kick();
    return true;
}

/* A hot mapping taken out of its slot, to the cache or the OS after all: its block named again
 * as the one freed there, as release() expects. */
static void hot_release(fa_segment_t *seg, bool expired)
{
    fa_atomic_store_relaxed(&seg->large_block, seg->large_prev); /* heap walks read it */
    release(seg, expired);
}

/* The heap's hot mapping if it fits `size` bytes (with at most an eighth to spare), taken out
 * of the slot; one that does not fit is released. NULL if none fits. */
static fa_segment_t *hot_take(size_t size)
{
    fa_heap_t *heap = _fa_heap_tls;
    if (!fa_atomic_load_relaxed(&heap->large_hot))
        return NULL;
    fa_segment_t *seg = fa_atomic_exchange_acquire(&heap->large_hot, NULL);
    if (!seg)
        return NULL; /* the purger took it */
    if (seg->mapped < size || seg->mapped - size > size / 8) {
        hot_release(seg, false);
        return NULL;
    }
    /* Its slack stayed counted while it was hot; count the new one instead (rarely another). */
    _fa_large_set_slack(seg, seg->mapped - size);
    heap->large_hot_reuses++;
    return seg;
}

void _fa_large_free(fa_segment_t *seg)
{
    if (seg->watched)
        _fa_large_watched_freed(seg);
    if (!hot_put(seg))
        release(seg, false);
}

/* For the purger: the heaps' hot mappings that have waited the purge delay (all of them if
 * `force`), taken out of their slots, a batch at a time; *next lowered to when the others are
 * due. */
struct hot_expiry {
    uint64_t now;
    bool force;
    long *next;
    size_t count;
    fa_segment_t *taken[16];
};

/* Under _fa_global_lock (_fa_heaps_foreach): seg may be taken back and freed meanwhile, but
 * a mapping on the live list is unmapped only after it leaves the list under that lock. */
static void expire_hot(const fa_heap_t *heap, void *arg)
{
    struct hot_expiry *e = arg;
    fa_segment_t **slot = (fa_segment_t **)&heap->large_hot;
    fa_segment_t *seg = fa_atomic_load_acquire(slot);
    if (!seg || e->count == sizeof e->taken / sizeof e->taken[0])
        return;
    /* First seen by a pass (0): its time starts now, so it waits one to two delays. A failed
     * compare-and-swap leaves the time already set in `since`. */
    uint64_t since = 0;
    if (fa_atomic_cas_relaxed(&seg->cached_at, &since, e->now))
        since = e->now;
    uint64_t due = since + (uint64_t)fa_option(purge_delay);
    /* The slot still holding seg means its thread has not taken it back since the load. */
    if ((e->force || due <= e->now) && fa_atomic_cas_acquire(slot, &seg, NULL))
        e->taken[e->count++] = seg;
    else if (!e->force)
        fa_purge_note_due(e->next, due, e->now);
}

/* The usable bytes of a block placed `offset` bytes into the mapping, or one page further: the
 * page it may move by is never counted, wherever it starts, so that a mapping reused at the
 * same size keeps the same usable size and the bytes-in-use counter, shared by all threads, is
 * not written at every reuse. */
static size_t shiftable_usable(const fa_segment_t *seg, size_t offset)
{
    return seg->mapped - offset - FA_OS_PAGE;
}

/* A block in the heap's hot mapping, still on the live list and in the segment map: only the
 * block's place (a page further than the one freed there, or back), the statistics' bytes in
 * use if they changed, and calloc's zeros. */
static void *hot_reuse(fa_segment_t *seg, size_t n, size_t offset, bool zero)
{
    size_t usable = shiftable_usable(seg, offset);
    if (seg->large_prev == (uintptr_t)seg + offset) /* large_prev: the block freed here */
        offset += FA_OS_PAGE;
    if (usable != seg->large_usable) /* the bytes in use still count the freed block's */
        fa_count(large_in_use, usable - seg->large_usable);
    seg->large_usable = usable;
    if (zero)
        clear_old(seg, offset, offset + n, _fa_large_used_whole());
    /* Heap walks read the fields above (under the lock) once the block is named. */
    fa_atomic_store_release(&seg->large_block, (uintptr_t)seg + offset);
    return (void *)((uintptr_t)seg + offset);
}

size_t _fa_large_mapping_size(size_t n, size_t offset, size_t after)
{
    /* At least one byte: with n == 0 and an alignment of a whole page or more, the block would
     * start where its mapping ends, which from 4 MiB up is the next chunk, maybe a segment's,
     * and map_block would overwrite that chunk's entry in the segment map. */
    size_t size = offset + (n ? n : 1);
    if (n > PTRDIFF_MAX || size < n || size > PTRDIFF_MAX) {
        errno = ENOMEM;
        return 0;
    }
    return fa_align_up(size, FA_OS_PAGE) + after;
}

void *_fa_large_place(fa_segment_t *seg, size_t n, size_t offset, size_t usable, size_t dirty,
                      bool zero, bool whole, bool populate)
{
    seg->kind = FA_SEG_LARGE;
    seg->page_shift = FA_SEG_SHIFT; /* any pointer in the first chunk selects pages[0] */
    seg->page_count = 1;
    seg->heap = NULL;
    /* Free reads only the descriptor's first line of a large block (the owner and thread words,
     * the block test), and zeros there send it to the slow path; nothing writes the others. */
    memset(&seg->pages[0], 0, offsetof(fa_page_t, free));
    seg->large_prev = seg->large_block;
    seg->large_block = (uintptr_t)seg + offset;
    seg->large_usable = usable;
    seg->watched = 0;
    map_block(seg, true);
    fa_mutex_lock(&_fa_global_lock);
    fa_segment_list_push(&live, seg);
    fa_count_locked(large_allocs);
    fa_count(large_in_use, seg->large_usable); /* atomic (realloc counts without the lock) */
    fa_mutex_unlock(&_fa_global_lock);
    /* The block's first fresh byte: calloc clears only what comes before it (memory a reused
     * mapping held); fresh pages are zero, and writing them would fault them all in. Those are
     * left to the first touch (to watch), or, for calloc, faulted in at once: the program uses
     * such blocks whole. */
    size_t fresh = dirty < offset + n ? dirty : offset + n;
    if (fresh <= offset)
        fresh = offset;
    else if (zero)
        fresh = clear_old(seg, offset, fresh, whole);
    if (zero && populate && _fa_large_callocs_whole())
        _fa_large_populate(seg, fresh, offset + n);
    else if (!populate || zero)
        _fa_large_watch(seg, fresh, zero);
    _fa_purge_start_point(); /* a hot mapping cached on the way waits for the purger */
    return (void *)seg->large_block;
}

static void *large_alloc(size_t n, size_t alignment, bool zero)
{
    FA_ASSERT((alignment & (alignment - 1)) == 0);
    if (alignment < FA_ALIGN)
        alignment = FA_ALIGN;
    size_t offset = fa_align_up(FA_LARGE_HEADER, alignment);
    /* A block in a reused mapping starts one page further than the block freed there last (and
     * back again the next time), so that a second free of the old block is reported, not taken
     * for a free of the new one. The extra page is address space; it is touched only as the
     * block's own memory. */
    bool shiftable = alignment <= FA_OS_PAGE;
    size_t size = _fa_large_mapping_size(n, offset, shiftable ? FA_OS_PAGE : 0);
    if (!size)
        return NULL;
    size_t base_align = alignment > FA_SEG_SIZE ? alignment : FA_SEG_SIZE;
    if (base_align == FA_SEG_SIZE && shiftable) {
        fa_segment_t *hot = hot_take(size);
        if (hot)
            return hot_reuse(hot, n, offset, zero);
    }
    /* While the program uses its large blocks whole, calloc clears reused memory in place and
     * faults the fresh pages in at once. */
    bool whole = _fa_large_learn();
    size_t dirty; /* bytes at the mapping's start that may hold old data */
    fa_segment_t *seg = _fa_large_take(size, base_align, &dirty);
    if (!seg) {
        errno = ENOMEM;
        return NULL;
    }
    /* A block all fresh may be left alone, to keep watching; one holding old data cannot be. */
    bool populate = whole && (dirty || !_fa_large_probe());
    size_t usable = shiftable ? shiftable_usable(seg, offset) : seg->mapped - offset;
    if (shiftable && seg->large_block == (uintptr_t)seg + offset) /* the block freed here last */
        offset += FA_OS_PAGE;
    seg->by_mode = false;
    return _fa_large_place(seg, n, offset, usable, dirty, zero, whole, populate);
}

void *_fa_large_alloc(size_t n, size_t alignment, bool zero)
{
    void *p = large_alloc(n, alignment, zero);
    /* Every large block comes here: the heap profiler counts it (profile/profile.h). */
    fa_profile_count(p, n);
    return p;
}

void *_fa_large_realloc(fa_segment_t *seg, size_t n)
{
    size_t offset = seg->large_block - (uintptr_t)seg;
    size_t need = offset + n;
    if (n > PTRDIFF_MAX || need > PTRDIFF_MAX)
        return NULL;
    need = fa_align_up(need, FA_OS_PAGE);
    size_t old_usable = seg->large_usable;
    if (seg->watched) /* resized: its pages no longer say how the block is used */
        _fa_large_unwatch(seg);
    /* The mapping is resized to fit exactly: it no longer holds slack. */
    _fa_large_set_slack(seg, 0);
    if (need <= seg->mapped) {
        _fa_large_trim(seg, need);
    } else {
        /* Grow with an eighth of headroom so that a buffer grown step by step moves rarely. */
        size_t grown = fa_align_up(need + need / 8, FA_OS_PAGE);
        size_t old_mapped = seg->mapped;
        if (!_fa_os_grow_in_place(seg, old_mapped, grown)) {
            if (offset >= FA_SEG_SIZE)
                return NULL;
            /* Forget the old address before the move releases it: another thread may map a
             * segment there at once, and its map entry must not be erased after the fact. */
            _fa_segmap_remove(seg, 1);
            live_unlink(seg);
            fa_segment_t *moved = _fa_os_move_aligned(seg, old_mapped, grown, FA_SEG_SIZE);
            if (!moved) {
                live_link(seg);
                _fa_segmap_add(seg, 1);
                return NULL;
            }
            seg = moved;
            seg->large_block = (uintptr_t)seg + offset;
            live_link(seg);
            _fa_segmap_add(seg, 1);
        }
        seg->mapped = grown;
        fa_count(reserved, grown - old_mapped);
        _fa_stats_commit((int64_t)(grown - old_mapped));
    }
    seg->large_usable = seg->mapped - offset;
    fa_count(large_in_use, seg->large_usable - old_usable);
    return (void *)seg->large_block;
}

void _fa_large_grew_in_place(fa_segment_t *seg, size_t n)
{
    FA_ASSERT(n > seg->large_usable - seg->large_slack && n <= seg->large_usable);
    _fa_large_set_slack(seg, seg->large_usable - n);
}

void _fa_large_purge(uint64_t now, bool force, long *next)
{
    _fa_large_cache_purge(now, force, next);
    /* The heaps' hot mappings that have waited the delay go to the OS, a batch at a time. */
    struct hot_expiry e;
    do {
        e = (struct hot_expiry){.now = now, .force = force, .next = next};
        _fa_heaps_foreach(expire_hot, &e);
        for (size_t i = 0; i < e.count; i++)
            hot_release(e.taken[i], true);
    } while (e.count == sizeof e.taken / sizeof e.taken[0]);
}

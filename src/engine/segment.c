/* Segments: 4 MiB-aligned mappings carved into pages of one size (see types.h).
 *
 * A segment is in exactly one place: a heap's list (owned), the abandoned list (its thread
 * exited with live blocks in it), the cache (empty, kept for reuse until the purge delay ends)
 * or the cold list (empty, memory handed back; small and medium segments are never
 * unmapped). Every small and medium segment is also on the registry, which the purger walks
 * to hand free pages back to the OS; the registry, the cache and the abandoned list are
 * guarded by _fa_global_lock. Pages change state with compare-and-swap, so the owner and the purger
 * never both touch a free page (see enum fa_page_state).
 */
#include <string.h>

#include "engine/free_list.h"
#include "engine/mode_pages.h"
#include "common/options.h"
#include "platform/atomic.h"

fa_map_entry_t _fa_segmap[FA_SEGMAP_SIZE] FA_BSS_APART;
fa_mutex_t _fa_global_lock = FA_MUTEX_INIT;

static fa_segment_t *registry;
static fa_segment_t *cache;
static size_t cache_count;
static fa_segment_t *abandoned;
static fa_segment_t *cold;     /* empty, memory purged, address range kept (see below) */
static size_t abandoned_count; /* read without the lock to skip it when zero */

static const uint8_t page_shift_of[3] FA_STARTUP_CONST = {FA_SMALL_PAGE_SHIFT, FA_MEDIUM_PAGE_SHIFT,
                                                          FA_BIG_PAGE_SHIFT};
static const size_t first_offset_of[3] FA_STARTUP_CONST = {FA_SMALL_FIRST_PAGE,
                                                           FA_MEDIUM_FIRST_PAGE, FA_BIG_FIRST_PAGE};

size_t _fa_segment_first_offset(int kind)
{
    return first_offset_of[kind];
}

/* Bytes of metadata at the start of a segment that are really touched. */
static size_t header_bytes(const fa_segment_t *seg)
{
    return fa_align_up(fa_segment_index_offset(seg) + FA_SEG_INDEX_SIZE, FA_OS_PAGE);
}

static size_t page_bytes(const fa_segment_t *seg, const fa_page_t *page)
{
    size_t index = (size_t)(page - seg->pages);
    size_t size = (size_t)1 << seg->page_shift;
    return index ? size : size - _fa_segment_first_offset(seg->kind);
}

/* Memory no page has handed out yet is inaccessible, from seg->opened to the segment's end, as
 * glibc's heap ends at its top with unmapped memory after it: a write running on past a block
 * faults there instead of landing in memory a later block gets. Pages are taken lowest first,
 * so a segment has one such boundary (two kernel mappings), which moves up a page at a time
 * (a block at a time in big segments: a 256 KiB block is followed by the next one's closed
 * memory until that one is provisioned) and down only when the segment goes cold. The header
 * of the largest kind stays open: a cold segment may come back as another kind. */
#define FA_SEG_HEADER_MAX ((FA_SEG_INDEX_END_MAX + FA_OS_PAGE - 1) & ~(size_t)(FA_OS_PAGE - 1))
_Static_assert(FA_SEG_HEADER_MAX <= FA_SMALL_FIRST_PAGE, "the header stays open before page 0");

#define FA_SMALL_OPEN_STEP ((size_t)4 << FA_SMALL_PAGE_SHIFT)

/* A mode with pages of its own (secure mode) opens the memory of its segments itself, page by
 * page or block by block (`provision`, engine/mode_pages.h): its guard pages lie inside the
 * boundary, and what its pages never provision stays closed. Its segments are mapped closed as
 * any and take the boundary out of use when registered (secure_guard.c). */
static void segment_close(fa_segment_t *seg)
{
    _fa_os_protect((char *)seg + FA_SEG_HEADER_MAX, FA_SEG_SIZE - FA_SEG_HEADER_MAX);
    seg->opened = FA_SEG_HEADER_MAX;
}

bool _fa_segment_open(fa_segment_t *seg, size_t end)
{
    /* Atomic: a heap extending a migrant (page_pool.c) reads the boundary of a segment whose
     * owner may move it meanwhile; the migrant's own memory lies below it already. */
    if (fa_likely(end <= fa_atomic_load_relaxed(&seg->opened)))
        return true;
    /* Whole pages, 4 small ones at a time: a short program's first allocations take a page
     * per size class, and a system call for each was most of what its first heap cost. The
     * boundary stays under 256 KiB past the last page provisioned, so a write running 1 MiB
     * past a block still faults. With huge pages, 2 MiB steps keep the boundary off the huge
     * pages' insides. */
    size_t step = fa_option(huge_pages)       ? ((size_t)2 << 20)
                  : seg->kind == FA_SEG_BIG   ? FA_OS_PAGE
                  : seg->kind == FA_SEG_SMALL ? FA_SMALL_OPEN_STEP
                                              : (size_t)1 << seg->page_shift;
    size_t to = fa_align_up(end, step);
    if (to > FA_SEG_SIZE)
        to = FA_SEG_SIZE;
    if (!_fa_os_commit((char *)seg + seg->opened, to - seg->opened))
        return false;
    fa_atomic_store_relaxed(&seg->opened, to);
    return true;
}

static uintptr_t page_area(const fa_segment_t *seg, const fa_page_t *page)
{
    size_t index = (size_t)(page - seg->pages);
    return index ? (uintptr_t)seg + (index << seg->page_shift)
                 : (uintptr_t)seg + _fa_segment_first_offset(seg->kind);
}

static void segmap_store(uintptr_t start, size_t chunks, fa_map_entry_t first, fa_map_entry_t rest)
{
    size_t chunk = start >> FA_SEG_SHIFT;
    FA_ASSERT(start % FA_SEG_SIZE == 0 && chunks > 0 && chunk + chunks <= FA_SEGMAP_SIZE);
    fa_atomic_store_release(&_fa_segmap[chunk], first);
    for (size_t i = 1; i < chunks; i++)
        fa_atomic_store_release(&_fa_segmap[chunk + i], rest);
}

static void segment_index_fill(fa_segment_t *seg)
{
    unsigned shift = seg->page_shift - FA_SMALL_PAGE_SHIFT;
    fa_page_t **index = fa_segment_index(seg);
    for (size_t i = 0; i < FA_SEG_PIECES; i++)
        index[i] = &seg->pages[i >> shift];
}

void _fa_segmap_add(fa_segment_t *seg, size_t chunks)
{
    /* Before the entry is published: a free that finds the entry reads the index at once.
     * Every fill writes the whole index, and its first and last slots tell the address and
     * the page size it was written for; a mapping taken again where it was, with the same
     * page size (a cached large block, reused by a malloc/free loop), keeps its index. */
    unsigned shift = seg->page_shift - FA_SMALL_PAGE_SHIFT;
    fa_page_t **index = fa_segment_index(seg);
    if (index[0] != &seg->pages[0] ||
        index[FA_SEG_PIECES - 1] != &seg->pages[(FA_SEG_PIECES - 1) >> shift])
        segment_index_fill(seg);
    segmap_store((uintptr_t)seg, chunks, fa_map_entry_of(seg), FA_MAP_INTERIOR);
}

void _fa_segmap_remove(const fa_segment_t *seg, size_t chunks)
{
    segmap_store((uintptr_t)seg, chunks, FA_MAP_NONE, FA_MAP_NONE);
}

/* With the lock held: give a cached segment's memory back to the OS but keep its address range,
 * forever. A thread that has just pushed a remote free may still read the owner word of a page
 * in it (free.c), so the range must stay readable, and its page descriptors must then read as
 * "no owner": purged memory reads as zero, which is exactly an unowned CLEAN page. The first OS
 * page (the segment's own fields and list link) stays; its descriptors are zeroed by hand. */
static void segment_make_cold_locked(fa_segment_t *seg)
{
    if (seg->all_prev)
        seg->all_prev->all_next = seg->all_next;
    else
        registry = seg->all_next;
    if (seg->all_next)
        seg->all_next->all_prev = seg->all_prev;
    seg->all_next = seg->all_prev = NULL;
    _fa_segmap_remove(seg, 1);
    int64_t committed = (int64_t)header_bytes(seg);
    for (size_t i = 0; i < seg->page_count; i++)
        if (fa_atomic_load_relaxed(&seg->pages[i].state) != FA_PAGE_CLEAN)
            committed += (int64_t)page_bytes(seg, &seg->pages[i]);
    char *first_page_end = (char *)seg + FA_OS_PAGE;
    /* Word by word and atomically: a remote freer may still read these descriptors (above). */
    for (uint64_t *w = (uint64_t *)seg->pages; w < (uint64_t *)first_page_end; w++)
        fa_atomic_store_relaxed(w, 0);
    _fa_os_purge(first_page_end, FA_SEG_SIZE - FA_OS_PAGE);
    segment_close(seg);
    _fa_stats_commit(-(committed - FA_OS_PAGE));
    fa_count(purged, (uint64_t)(committed - FA_OS_PAGE));
    fa_segment_list_push(&cold, seg);
}

static void segment_register(fa_segment_t *seg, int kind)
{
    seg->kind = (uint8_t)kind;
    seg->page_shift = page_shift_of[kind];
    seg->page_count = (uint16_t)(FA_SEG_SIZE >> seg->page_shift);
    seg->used_pages = 0;
    seg->heap = NULL;
    seg->mapped = FA_SEG_SIZE;
    fa_mutex_lock(&_fa_global_lock);
    seg->all_prev = NULL;
    seg->all_next = registry;
    if (registry)
        registry->all_prev = seg;
    registry = seg;
    fa_mutex_unlock(&_fa_global_lock);
    const struct fa_mode_pages *own = fa_mode_pages();
    if (own)
        own->segment_registered(seg);
    /* A new or cold segment's index reads as zero: written without the test of
     * _fa_segmap_add, whose read of the fresh page faulted it in before the write did again. */
    segment_index_fill(seg);
    segmap_store((uintptr_t)seg, 1, fa_map_entry_of(seg), FA_MAP_INTERIOR);
}

/* A new segment of this kind, closed past its header (and a small one past its first
 * step: a page is taken from it at once). Mapped closed, then that much opened: one system
 * call instead of three (close all but the header, open the first page). */
static fa_segment_t *segment_map(int kind)
{
    fa_segment_t *seg;
    if (fa_option(huge_pages)) {
        seg = _fa_os_map_aligned(FA_SEG_SIZE, FA_SEG_SIZE);
        if (seg && fa_option(huge_pages))
            _fa_os_huge(seg, FA_SEG_SIZE);
        if (seg)
            segment_close(seg);
        return seg;
    }
    size_t open = kind == FA_SEG_SMALL && !fa_mode_pages() ? FA_SMALL_OPEN_STEP : FA_SEG_HEADER_MAX;
    seg = _fa_os_reserve(FA_SEG_SIZE, FA_SEG_SIZE);
    if (seg && !_fa_os_commit(seg, open)) {
        _fa_os_unmap(seg, FA_SEG_SIZE);
        return NULL;
    }
    if (seg)
        seg->opened = open;
    return seg;
}

/* With the lock held: a cached segment of this kind, taken from the cache; NULL if none. */
static fa_segment_t *cache_pop_locked(int kind)
{
    for (fa_segment_t *seg = cache; seg; seg = seg->next) {
        if (seg->kind == kind) {
            fa_segment_list_remove(&cache, seg);
            cache_count--;
            return seg;
        }
    }
    return NULL;
}

static fa_segment_t *segment_new(int kind)
{
    fa_mutex_lock(&_fa_global_lock);
    fa_segment_t *seg = cache_pop_locked(kind);
    if (seg) {
        fa_mutex_unlock(&_fa_global_lock);
        return seg;
    }
    seg = cold;
    if (seg)
        fa_segment_list_remove(&cold, seg);
    fa_mutex_unlock(&_fa_global_lock);
    if (seg) {
        /* All its pages are CLEAN (zero); only the header is touched again. */
        segment_register(seg, kind);
        _fa_stats_commit((int64_t)header_bytes(seg) - FA_OS_PAGE);
        return seg;
    }
    seg = segment_map(kind);
    if (!seg)
        return NULL;
    static unsigned mapped_count;
    seg->index_colour = (uint8_t)(fa_atomic_add_relaxed(&mapped_count, 1) % FA_SEG_INDEX_COLOURS);
    /* Fresh anonymous memory is zero: every page starts CLEAN. */
    fa_count(reserved, FA_SEG_SIZE);
    fa_count(segments, 1);
    segment_register(seg, kind);
    _fa_stats_commit((int64_t)header_bytes(seg));
    return seg;
}

/* Claim a free page of seg in state `want` for its owner; NULL if none. A page from
 * seg->opened up never handed out memory, so it is CLEAN: the search for a DIRTY one stops
 * there, and does not read (and fault in) the descriptors of a fresh segment's 64 pages. */
static fa_page_t *segment_take_page(fa_segment_t *seg, uint8_t want)
{
    for (size_t i = 0; i < seg->page_count; i++) {
        fa_page_t *page = &seg->pages[i];
        if (want != FA_PAGE_CLEAN && page_area(seg, page) >= (uintptr_t)seg + seg->opened)
            break;
        uint8_t state = want;
        /* Acquire: if the purger just cleaned it, its madvise happened before our use. */
        if (fa_atomic_load_relaxed(&page->state) != want ||
            !fa_atomic_cas_acquire(&page->state, &state, FA_PAGE_USED))
            continue;
        if (want == FA_PAGE_CLEAN)
            _fa_stats_commit((int64_t)page_bytes(seg, page));
        page->fresh = want == FA_PAGE_CLEAN;
        if (want == FA_PAGE_CLEAN)
            page->touched = 0;
        page->migrant = 0; /* a page of its segment's owner (page_pool.c) */
        /* Atomic: the mesher gives back detached pages of segments others own. */
        fa_atomic_add_relaxed(&seg->used_pages, 1);
        return page;
    }
    return NULL;
}

fa_page_t *_fa_segment_take_page(fa_heap_t *heap, size_t bin, uint8_t want)
{
    int kind = fa_bin_kind(bin);
    fa_page_t *page = NULL;
    for (fa_segment_t *seg = heap->segments[kind]; seg && !page; seg = seg->next)
        if (fa_atomic_load_relaxed(&seg->used_pages) < seg->page_count)
            page = segment_take_page(seg, want);
    return page;
}

/* The heap takes seg and its first page: a DIRTY one if any (a cached segment's, unless the
 * purger has been through it), else a CLEAN one (a new or cold segment has only those). */
static fa_page_t *segment_first_page(fa_heap_t *heap, fa_segment_t *seg)
{
    seg->heap = heap;
    fa_segment_list_push(&heap->segments[seg->kind], seg);
    fa_page_t *page = segment_take_page(seg, FA_PAGE_DIRTY);
    return page ? page : segment_take_page(seg, FA_PAGE_CLEAN);
}

fa_page_t *_fa_segment_dirty_page(fa_heap_t *heap, size_t bin)
{
    fa_page_t *page = _fa_segment_take_page(heap, bin, FA_PAGE_DIRTY);
    if (page)
        return page;
    fa_mutex_lock(&_fa_global_lock);
    fa_segment_t *seg = cache_pop_locked(fa_bin_kind(bin));
    fa_mutex_unlock(&_fa_global_lock);
    return seg ? segment_first_page(heap, seg) : NULL;
}

fa_page_t *_fa_segment_new_page(fa_heap_t *heap, size_t bin)
{
    fa_segment_t *seg = segment_new(fa_bin_kind(bin));
    return seg ? segment_first_page(heap, seg) : NULL;
}

void _fa_segments_fork_child(void)
{
    uintptr_t mine = fa_thread_pointer();
    for (fa_segment_t *seg = registry; seg; seg = seg->all_next) {
        for (size_t i = 0; i < seg->page_count; i++) {
            uintptr_t thread = fa_atomic_load_relaxed(&seg->pages[i].thread);
            if (thread != 0 && thread != mine)
                fa_atomic_store_relaxed(&seg->pages[i].thread, 0);
        }
    }
}

void _fa_segment_empty_page(fa_page_t *page)
{
    FA_ASSERT(page->used == 0); /* no live block, and not pinned as a queue's head */
    fa_atomic_add_relaxed(&_fa_counters.bin_frees[page->bin], fa_page_frees(page));
    fa_atomic_add_relaxed(&_fa_counters.collected[page->bin], page->xcollected);
    page->xcollected = 0;
    page->free = page->local = FA_LIST_END;
    page->capacity = 0;
    fa_atomic_store_relaxed(&page->limit, 0); /* no block of it may be freed now */
    page->placed = 0;
    page->listed = 0;
    page->fresh = 0; /* its memory holds old blocks now */
    fa_atomic_store_relaxed(&page->thread, 0);
    fa_atomic_store_relaxed(&page->owner, 0);
}

void _fa_segment_release_page(fa_page_t *page)
{
    fa_segment_t *seg = (fa_segment_t *)((uintptr_t)page & ~FA_SEG_MASK);
    _fa_segment_empty_page(page);
    fa_atomic_store_relaxed(&page->purge_at, _fa_os_now_ms() + (uint64_t)fa_option(purge_delay));
    /* Release: the fields above are written before the purger may see the page as DIRTY. */
    fa_atomic_store_release(&page->state, FA_PAGE_DIRTY);
    fa_atomic_sub_relaxed(&seg->used_pages, 1);
    _fa_purge_kick();
}

void _fa_segment_release(fa_segment_t *seg)
{
    seg->heap = NULL;
    seg->cached_at = _fa_os_now_ms();
    fa_mutex_lock(&_fa_global_lock);
    fa_segment_list_push(&cache, seg);
    cache_count++;
    if (cache_count > (size_t)fa_option(segment_cache)) {
        fa_segment_t *oldest = cache;
        while (oldest->next)
            oldest = oldest->next;
        fa_segment_list_remove(&cache, oldest);
        cache_count--;
        segment_make_cold_locked(oldest);
    }
    fa_mutex_unlock(&_fa_global_lock);
    _fa_purge_kick();
}

void _fa_segment_abandon(fa_segment_t *seg)
{
    seg->heap = NULL;
    fa_mutex_lock(&_fa_global_lock);
    fa_segment_list_push(&abandoned, seg);
    fa_atomic_add_relaxed(&abandoned_count, 1);
    fa_mutex_unlock(&_fa_global_lock);
    fa_count(abandoned, 1);
    _fa_purge_kick();
}

fa_segment_t *_fa_segment_pop_abandoned(int kind)
{
    if (!fa_atomic_load_relaxed(&abandoned_count))
        return NULL;
    fa_mutex_lock(&_fa_global_lock);
    fa_segment_t *seg = abandoned;
    while (seg && seg->kind != kind)
        seg = seg->next;
    if (seg) {
        fa_segment_list_remove(&abandoned, seg);
        fa_atomic_sub_relaxed(&abandoned_count, 1);
    }
    fa_mutex_unlock(&_fa_global_lock);
    if (seg)
        fa_count(abandoned, (uint64_t)-1);
    return seg;
}

/* With the lock held: collect remote frees in an abandoned segment; an empty one is cached. */
static void reclaim_abandoned_locked(fa_segment_t *seg)
{
    for (size_t i = 0; i < seg->page_count && fa_atomic_load_relaxed(&seg->used_pages) > 0; i++) {
        fa_page_t *page = &seg->pages[i];
        /* A migrant is pooled or another heap's (page_pool.c). */
        if (fa_atomic_load_relaxed(&page->state) != FA_PAGE_USED || page->mesh || page->migrant)
            continue;
        _fa_page_collect(page);
        if (page->used == 0)
            _fa_segment_release_page(page);
    }
    if (fa_atomic_load_relaxed(&seg->used_pages) == 0) {
        fa_segment_list_remove(&abandoned, seg);
        fa_atomic_sub_relaxed(&abandoned_count, 1);
        fa_count(abandoned, (uint64_t)-1);
        seg->cached_at = _fa_os_now_ms();
        fa_segment_list_push(&cache, seg);
        cache_count++;
    }
}

void _fa_segments_purge(uint64_t now, bool force, long *next)
{
    uint64_t delay = (uint64_t)fa_option(purge_delay);
    fa_mutex_lock(&_fa_global_lock);
    for (fa_segment_t *seg = abandoned, *after; seg; seg = after) {
        after = seg->next;
        reclaim_abandoned_locked(seg);
    }
    if (abandoned)
        fa_purge_note_due(next, now + 1000, now);
    for (fa_segment_t *seg = cache, *after; seg; seg = after) {
        after = seg->next;
        if (force || seg->cached_at + delay <= now) {
            fa_segment_list_remove(&cache, seg);
            cache_count--;
            segment_make_cold_locked(seg);
        } else {
            fa_purge_note_due(next, seg->cached_at + delay, now);
        }
    }
    for (fa_segment_t *seg = registry; seg; seg = seg->all_next) {
        for (size_t i = 0; i < seg->page_count; i++) {
            fa_page_t *page = &seg->pages[i];
            uint8_t state = FA_PAGE_DIRTY;
            if (fa_atomic_load_acquire(&page->state) != FA_PAGE_DIRTY)
                continue;
            uint64_t due = fa_atomic_load_relaxed(&page->purge_at);
            if (!force && due > now) {
                fa_purge_note_due(next, due, now);
                continue;
            }
            if (!fa_atomic_cas_acquire(&page->state, &state, FA_PAGE_PURGING))
                continue;
            size_t bytes = page_bytes(seg, page);
            _fa_os_purge((void *)page_area(seg, page), bytes);
            _fa_stats_commit(-(int64_t)bytes);
            fa_count(purged, bytes);
            fa_atomic_store_release(&page->state, FA_PAGE_CLEAN);
        }
    }
    fa_mutex_unlock(&_fa_global_lock);
}

void _fa_pages_foreach(void (*fn)(const fa_page_t *page, void *arg), void *arg)
{
    fa_mutex_lock(&_fa_global_lock);
    for (fa_segment_t *seg = registry; seg; seg = seg->all_next)
        for (size_t i = 0; i < seg->page_count; i++)
            if (fa_atomic_load_acquire(&seg->pages[i].state) == FA_PAGE_USED)
                fn(&seg->pages[i], arg);
    fa_mutex_unlock(&_fa_global_lock);
}

fa_segment_t *_fa_large_header(uintptr_t p)
{
    size_t chunk = p >> FA_SEG_SHIFT;
    while (chunk > 0 && fa_atomic_load_acquire(&_fa_segmap[chunk]) == FA_MAP_INTERIOR)
        chunk--;
    if (!fa_map_is_segment(fa_atomic_load_acquire(&_fa_segmap[chunk])))
        return NULL;
    fa_segment_t *seg = (fa_segment_t *)(chunk << FA_SEG_SHIFT);
    return seg->kind == FA_SEG_LARGE ? seg : NULL;
}

fa_segment_t *_fa_segment_of_block(const void *p, fa_page_t **page_out)
{
    uintptr_t a = (uintptr_t)p;
    size_t chunk = a >> FA_SEG_SHIFT;
    *page_out = NULL;
    if (chunk >= FA_SEGMAP_SIZE || (a & (FA_ALIGN - 1)))
        return NULL;
    fa_map_entry_t entry = fa_atomic_load_acquire(&_fa_segmap[chunk]);
    if (entry == FA_MAP_INTERIOR)
        return _fa_large_header(a);
    if (!fa_map_is_segment(entry))
        return NULL;
    fa_segment_t *seg = (fa_segment_t *)(a & ~FA_SEG_MASK);
    if (seg->kind == FA_SEG_LARGE)
        return seg;
    fa_page_t *page = &seg->pages[(a - (uintptr_t)seg) >> seg->page_shift];
    if (fa_atomic_load_acquire(&page->state) != FA_PAGE_USED || !fa_page_has_block(page, a))
        return NULL;
    *page_out = page;
    return seg;
}

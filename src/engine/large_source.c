/* Where large blocks' mappings come from and go back to: _fa_large_take and _fa_large_give.
 *
 * A freed mapping waits in a cache of FA_LARGE_CACHE_SLOTS entries until the purge delay ends,
 * within a budget (_fa_large_budget); one the cache cannot keep goes back to the OS at once.
 * take() serves a request from the smallest cached mapping that fits, else grows the largest
 * one (its pages stay; only the new part is fresh), else maps a new one. A bigger mapping is
 * kept whole while the slack that live blocks hold so stays within FITALLOC_LARGE_CACHE:
 * trimming and refaulting is what made programs that replace big buffers slow; past that bound,
 * the whole chunks a block does not reach go back to an empty cache (give_tail). Records 005,
 * 039 and 090 have the measurements (and why freed pieces are no longer moved under new blocks).
 */
#include <string.h>

#include "engine/engine.h"
#include "engine/mode_pages.h"
#include "common/options.h"
#include "platform/atomic.h"

#define FA_LARGE_CACHE_SLOTS 16

/* Under _fa_global_lock: the cached mappings, and the bytes they hold. */
static fa_segment_t *cache[FA_LARGE_CACHE_SLOTS];
static size_t kept;

/* Freed large memory kept mapped may reach half of what live large blocks hold, if that is
 * more than FITALLOC_LARGE_CACHE. A program replacing big buffers of random sizes frees and
 * asks for memory in uneven runs; a budget smaller than those runs makes it unmap pages in one
 * step and fault fresh ones in the next. The purge delay still bounds how long it is kept. */
#define FA_LARGE_KEEP_SHARE 2

size_t _fa_large_budget(void)
{
    size_t floor = (size_t)fa_option(large_cache);
    size_t share = fa_atomic_load_relaxed(&_fa_counters.large_in_use) / FA_LARGE_KEEP_SHARE;
    return floor && share > floor ? share : floor;
}

/* Bytes that live large blocks hold beyond their request because they reuse a bigger cached
 * mapping: bounded by FITALLOC_LARGE_CACHE alone, not by the budget's share of the live bytes,
 * since a block holds its slack for as long as it lives. */
static size_t slack_bytes;

void _fa_large_set_slack(fa_segment_t *seg, size_t slack)
{
    if (slack == seg->large_slack) /* a loop's buffer reused at its own size: no shared write */
        return;
    fa_atomic_add_relaxed(&slack_bytes, slack - seg->large_slack); /* wraps when it shrinks */
    seg->large_slack = slack;
}

void _fa_large_unmap(void *base, size_t size)
{
    fa_count(reserved, -(uint64_t)size);
    fa_count(purged, size);
    _fa_stats_commit(-(int64_t)size);
    _fa_os_unmap(base, size);
}

void _fa_large_trim(fa_segment_t *seg, size_t keep)
{
    FA_ASSERT(keep % FA_OS_PAGE == 0 && keep <= seg->mapped);
    if (keep < seg->mapped)
        _fa_large_unmap((char *)seg + keep, seg->mapped - keep);
    seg->mapped = keep;
}

fa_segment_t *_fa_large_fit_mapping(fa_segment_t *seg, size_t size)
{
    size_t mapped = seg->mapped;
    seg->large_slack = 0;
    if (mapped >= size) {
        /* Keep the bigger mapping (its pages are there already) while the slack of all live
         * large blocks stays within FITALLOC_LARGE_CACHE; else give most of the tail back. */
        size_t slack = mapped - size;
        if (!slack) /* the same size again (a loop's buffer): no shared counter to touch */
            return seg;
        size_t total = fa_atomic_add_relaxed(&slack_bytes, slack);
        if (total <= (size_t)fa_option(large_cache)) {
            seg->large_slack = slack;
            return seg;
        }
        fa_atomic_sub_relaxed(&slack_bytes, slack);
        size_t keep = fa_align_up(size + size / 8, FA_OS_PAGE);
        if (keep < mapped)
            _fa_large_trim(seg, keep);
        return seg;
    }
    fa_segment_t *grown = seg;
    if (!_fa_os_grow_in_place(seg, mapped, size)) {
        grown = _fa_os_move_aligned(seg, mapped, size, FA_SEG_SIZE);
        if (!grown) {
            _fa_large_unmap(seg, mapped);
            return NULL;
        }
    }
    grown->mapped = size;
    fa_count(reserved, size - mapped);
    _fa_stats_commit((int64_t)(size - mapped));
    return grown;
}

fa_segment_t *_fa_large_map_new(size_t size, size_t base_align)
{
    fa_segment_t *seg = _fa_os_map_aligned(size, base_align);
    if (!seg)
        return NULL;
    if (fa_option(huge_pages))
        _fa_os_huge(seg, size);
    fa_count(reserved, size);
    _fa_stats_commit((int64_t)size);
    seg->mapped = size;
    seg->large_slack = 0;
    return seg;
}

/* A cached mapping whose slack _fa_large_fit_mapping would trim, taken when the cache holds no
 * other: the chunks past the request's last go back to the cache as a mapping of their own,
 * pages resident, instead of to the OS. A later bigger request takes them rather than grow a
 * mapping by fresh pages (which calloc populates); the cache holds no more than a moment before.
 */
static void give_tail(fa_segment_t *seg, size_t size)
{
    size_t cut = fa_align_up(size, FA_SEG_SIZE);
    if (cut >= seg->mapped ||
        fa_atomic_load_relaxed(&slack_bytes) + seg->mapped - size <= (size_t)fa_option(large_cache))
        return;
    fa_segment_t *tail = (fa_segment_t *)((char *)seg + cut);
    /* Its header held old data: a page index that is not all zeros would lead frees astray. */
    memset(tail, 0, FA_LARGE_HEADER);
    tail->mapped = seg->mapped - cut;
    tail->large_block = (uintptr_t)tail; /* names no block, and passes _fa_large_reusable */
    seg->mapped = cut;
    _fa_large_give(tail, false);
}

/* The cached mapping for `size` bytes: the smallest that is large enough, else the largest one
 * (grown); NULL if the cache is empty or the growth failed. */
static fa_segment_t *cache_take(size_t size, size_t *dirty)
{
    size_t pick = FA_LARGE_CACHE_SLOTS;
    fa_mutex_lock(&_fa_global_lock);
    for (size_t i = 0; i < FA_LARGE_CACHE_SLOTS; i++) {
        fa_segment_t *seg = cache[i];
        if (!seg)
            continue;
        if (pick == FA_LARGE_CACHE_SLOTS) {
            pick = i;
            continue;
        }
        size_t have = cache[pick]->mapped, cand = seg->mapped;
        bool better = have >= size ? (cand >= size && cand < have) : cand > have;
        if (better)
            pick = i;
    }
    fa_segment_t *found = NULL;
    if (pick < FA_LARGE_CACHE_SLOTS) {
        found = cache[pick];
        cache[pick] = NULL;
        kept -= found->mapped;
    }
    bool alone = !kept;
    fa_mutex_unlock(&_fa_global_lock);
    if (!found)
        return NULL;
    if (alone)
        give_tail(found, size);
    size_t had = found->mapped;
    fa_segment_t *fitted = _fa_large_fit_mapping(found, size);
    /* A grown mapping's new pages are fresh (zero). */
    if (fitted)
        *dirty = had < size ? had : size;
    return fitted;
}

fa_segment_t *_fa_large_take(size_t size, size_t base_align, size_t *dirty)
{
    fa_segment_t *seg = NULL;
    *dirty = 0;
    if (base_align == FA_SEG_SIZE)
        seg = cache_take(size, dirty);
    return seg ? seg : _fa_large_map_new(size, base_align);
}

/* Whether a freed block's mapping may serve another block: one of the core's own, at a
 * segment-aligned base, its block in the first half of the first chunk (one map entry). */
bool _fa_large_reusable(const fa_segment_t *seg)
{
    return seg->large_block - (uintptr_t)seg < FA_SEG_SIZE / 2 &&
           ((uintptr_t)seg & FA_SEG_MASK) == 0 && !fa_mode_pages_of(seg);
}

void _fa_large_give(fa_segment_t *seg, bool expired)
{
    bool cached = false;
    if (!expired && _fa_large_reusable(seg)) {
        fa_atomic_store_relaxed(&seg->cached_at, _fa_os_now_ms());
        fa_mutex_lock(&_fa_global_lock);
        if (kept + seg->mapped <= _fa_large_budget()) {
            for (size_t i = 0; i < FA_LARGE_CACHE_SLOTS && !cached; i++) {
                if (!cache[i]) {
                    cache[i] = seg;
                    kept += seg->mapped;
                    cached = true;
                }
            }
        }
        fa_mutex_unlock(&_fa_global_lock);
    }
    if (cached)
        _fa_purge_kick();
    else
        _fa_large_unmap(seg, seg->mapped);
}

void _fa_large_cache_purge(uint64_t now, bool force, long *next)
{
    fa_segment_t *expired[FA_LARGE_CACHE_SLOTS];
    size_t count = 0;
    uint64_t delay = (uint64_t)fa_option(purge_delay);
    fa_mutex_lock(&_fa_global_lock);
    for (size_t i = 0; i < FA_LARGE_CACHE_SLOTS; i++) {
        fa_segment_t *seg = cache[i];
        if (!seg)
            continue;
        if (force || seg->cached_at + delay <= now) {
            cache[i] = NULL;
            kept -= seg->mapped;
            expired[count++] = seg;
        } else {
            fa_purge_note_due(next, seg->cached_at + delay, now);
        }
    }
    fa_mutex_unlock(&_fa_global_lock);
    for (size_t i = 0; i < count; i++)
        _fa_large_unmap(expired[i], expired[i]->mapped);
}

/* Spare pages: memory of freed large blocks kept mapped, and moved under the next ones.
 *
 * A large block is a mapping of its own, sized to its request. A program that replaces big
 * buffers of varying sizes rarely frees a mapping that fits the next request: reusing a bigger
 * one leaves a tail to hand back, a smaller one has to grow. Handing the tail to the OS and
 * faulting fresh pages in for the growth costs a fault and a page the kernel clears, per 4 KiB,
 * at every replacement. Instead such a tail (or a whole mapping the cache cannot keep) waits
 * here, mapped, and the next mapping that needs fresh pages takes these with mremap, which
 * moves page-table entries and copies nothing. They hold old data: malloc hands them out as
 * they are, calloc clears them, which costs less than the faults. docs/design.md ("Large
 * blocks") has the measurements.
 *
 * Spare pages are taken, and kept, only while the program is seen to use its large blocks
 * whole (large_populate.c): elsewhere they would make resident what it may never touch, for as
 * long as the block lives. They count against FITALLOC_LARGE_CACHE together with the cached
 * mappings (_fa_large_kept) and go back to the OS after FITALLOC_PURGE_DELAY, as those do.
 *
 * mremap moves a range only from within one kernel mapping, and a range moved into a block's
 * mapping stays a kernel mapping of its own. So a block's mapping records where its parts meet
 * (fa_large_splits), a piece is cut at those points when it comes back here, and no piece ever
 * spans two kernel mappings. Secure mode keeps no spare pages (secure.c retires mappings).
 */
#include "common/options.h"
#include "engine/engine.h"

#define FA_SPARE_SLOTS 64
/* A smaller piece goes back to the OS: not worth a slot and a system call. */
#define FA_SPARE_MIN ((size_t)64 << 10)

/* Under _fa_global_lock. A slot of size 0 is free. */
static struct spare_piece {
    uintptr_t base;
    size_t size;
    uint64_t since; /* ms: when it was freed */
} pieces[FA_SPARE_SLOTS] FA_BSS_APART;
/* Bytes of fresh pages that fills were asked to cover, in the current window of
 * FITALLOC_PURGE_DELAY ms and in the one before: the spare keeps no more than that. A program
 * whose freed memory serves its next blocks some other way (the cache, slack) asks for little,
 * and pieces kept for it would only wait, resident, until they expire. */
static size_t asked, asked_before;
static uint64_t window_start;

/* The recent demand, after rolling the window forward to `now` (under _fa_global_lock). */
static size_t recent_demand(uint64_t now)
{
    uint64_t delay = (uint64_t)fa_option(purge_delay);
    if (now >= window_start + delay) {
        asked_before = now >= window_start + 2 * delay ? 0 : asked;
        asked = 0;
        window_start = now;
    }
    return asked > asked_before ? asked : asked_before;
}

/* Keep [base, base+size), which lies in one kernel mapping, or as much of its start as the
 * budget, the recent demand and a slot allow; unmap the rest. Whether any was kept. */
static bool keep_piece(uintptr_t base, size_t size, uint64_t now)
{
    size_t kept = 0;
    /* Spare pages are taken only while the program uses its large blocks whole. */
    if (size >= FA_SPARE_MIN && !_fa_secure && _fa_large_used_whole() && _fa_os_moves_pages()) {
        fa_mutex_lock(&_fa_global_lock);
        size_t held = 0, slot = FA_SPARE_SLOTS;
        for (size_t i = 0; i < FA_SPARE_SLOTS; i++) {
            held += pieces[i].size;
            if (!pieces[i].size)
                slot = i;
        }
        size_t demand = recent_demand(now);
        size_t budget = _fa_large_budget();
        size_t room = demand > held ? demand - held : 0;
        size_t left = budget > _fa_large_kept ? budget - _fa_large_kept : 0;
        if (left < room)
            room = left;
        room &= ~(FA_OS_PAGE - 1);
        if (slot < FA_SPARE_SLOTS && room >= FA_SPARE_MIN) {
            kept = size < room ? size : room;
            pieces[slot] = (struct spare_piece){base, kept, now};
            _fa_large_kept += kept;
        }
        fa_mutex_unlock(&_fa_global_lock);
    }
    if (kept < size)
        _fa_large_unmap((void *)(base + kept), size - kept);
    return kept > 0;
}

void _fa_spare_give(fa_segment_t *seg, size_t keep)
{
    FA_ASSERT(keep % FA_OS_PAGE == 0 && keep <= seg->mapped);
    size_t mapped = seg->mapped;
    /* A copy: the header's own page may be handed over (keep 0). */
    fa_large_splits_t splits = *fa_large_splits(seg);
    if (keep) {
        fa_large_splits_t *kept = fa_large_splits(seg);
        seg->mapped = keep;
        while (kept->count && kept->at[kept->count - 1] >= keep)
            kept->count--;
    }
    /* One piece per part, from the last one down to keep. */
    uint64_t now = _fa_os_now_ms();
    bool any = false;
    size_t end = mapped;
    for (size_t part = splits.count + 1; part-- > 0 && end > keep;) {
        size_t start = part ? splits.at[part - 1] : 0;
        if (start < keep)
            start = keep;
        any |= keep_piece((uintptr_t)seg + start, end - start, now);
        end = start;
    }
    if (any)
        _fa_purge_kick();
}

/* Record that a part of seg's mapping starts at `at` (unless one does already). */
static void split_at(fa_segment_t *seg, size_t at)
{
    fa_large_splits_t *splits = fa_large_splits(seg);
    size_t n = splits->count;
    if (at > 0 && at < seg->mapped && (n == 0 || splits->at[n - 1] < at)) {
        FA_ASSERT(n < FA_LARGE_SPLITS);
        splits->at[splits->count++] = at;
    }
}

size_t _fa_spare_fill(fa_segment_t *seg, size_t from)
{
    FA_ASSERT(from % FA_OS_PAGE == 0 && from <= seg->mapped && !_fa_secure);
    size_t at = from;
    uint64_t now = _fa_os_now_ms();
    fa_mutex_lock(&_fa_global_lock);
    recent_demand(now);
    asked += seg->mapped - from;
    fa_mutex_unlock(&_fa_global_lock);
    /* Each piece moved in may add two splits: where it starts and where fresh pages resume. */
    while (at < seg->mapped && fa_large_splits(seg)->count + 2 <= FA_LARGE_SPLITS) {
        uintptr_t source = 0;
        size_t take = 0;
        fa_mutex_lock(&_fa_global_lock);
        size_t pick = FA_SPARE_SLOTS;
        for (size_t i = 0; i < FA_SPARE_SLOTS; i++) {
            if (pieces[i].size && (pick == FA_SPARE_SLOTS || pieces[i].size > pieces[pick].size))
                pick = i;
        }
        if (pick < FA_SPARE_SLOTS) {
            /* The biggest piece (fewest parts), from its end (the rest stays where it is). */
            struct spare_piece *piece = &pieces[pick];
            take = piece->size < seg->mapped - at ? piece->size : seg->mapped - at;
            piece->size -= take;
            source = piece->base + piece->size;
            _fa_large_kept -= take;
        }
        fa_mutex_unlock(&_fa_global_lock);
        if (!take)
            break;
        if (!_fa_os_move_pages((void *)source, take, (char *)seg + at)) {
            _fa_large_unmap((void *)source, take);
            break;
        }
        /* The fresh pages it replaced were counted by whoever mapped them. */
        fa_count(reserved, -(uint64_t)take);
        _fa_stats_commit(-(int64_t)take);
        split_at(seg, at);
        split_at(seg, at + take);
        at += take;
    }
    return at;
}

void _fa_spare_purge(uint64_t now, bool force, long *next)
{
    struct spare_piece expired[FA_SPARE_SLOTS];
    size_t count = 0;
    uint64_t delay = (uint64_t)fa_option(purge_delay);
    fa_mutex_lock(&_fa_global_lock);
    for (size_t i = 0; i < FA_SPARE_SLOTS; i++) {
        if (!pieces[i].size)
            continue;
        if (force || pieces[i].since + delay <= now) {
            expired[count++] = pieces[i];
            _fa_large_kept -= pieces[i].size;
            pieces[i].size = 0;
        } else {
            fa_purge_note_due(next, pieces[i].since + delay, now);
        }
    }
    fa_mutex_unlock(&_fa_global_lock);
    for (size_t i = 0; i < count; i++)
        _fa_large_unmap((void *)expired[i].base, expired[i].size);
}

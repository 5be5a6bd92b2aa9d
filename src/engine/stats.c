/* Statistics: the global counters (counters.c) and the per-page ones summed on demand, and the
 * report printed by FITALLOC_STATS=1. */
#include <string.h>

#include "engine/free_list.h"
#include "common/options.h"
#include "common/report.h"
#include "engine/size_class.h"
#include "fitalloc.h"
#include "platform/atomic.h"

/* Pages and heaps in use belong to other threads, whose counters change under us: the
 * snapshot is approximate by design (see fitalloc-stats.h), so the reads are deliberately
 * unsynchronized.
 *
 * Per class: allocs = frees + live, and a page's frees (fa_page_frees) count local frees plus the remote
 * frees its owner collected. Remote frees not collected yet are still in `used`; their number
 * is (remote frees counted by the freeing threads) - (remote frees collected by owners). */
struct snapshot {
    struct fa_stats *out;
    int64_t pending[FA_BINS];
    /* Large blocks that went through the heaps' hot slots (large.c), which the shared
     * counters do not see: reuses (a free and a malloc each), and the blocks freed into a slot
     * now (the shared counters still count them live). */
    uint64_t hot_reuses, hot_held, hot_held_bytes;
};

__attribute__((no_sanitize("thread"))) static void add_page(const fa_page_t *page, void *arg)
{
    struct snapshot *snap = arg;
    struct fa_stats_class *c = &snap->out->size_class[page->bin];
    c->frees += fa_page_frees(page);
    c->allocs += page->placed - fa_page_free_length(page);
    snap->pending[page->bin] -= (int64_t)page->xcollected;
    snap->pending[page->bin] += (int64_t)_fa_guard_held_in(page);
}

/* The blocks on a heap's loan list of one page's blocks (a link out of the page ends the count;
 * read as it is, like the pages). */
__attribute__((no_sanitize("thread"))) static uint64_t loan_length(const fa_page_t *page,
                                                                   const fa_block_t *block)
{
    uint64_t n = 0;
    for (; block && block != FA_LIST_END && n < page->capacity; n++) {
        if (!fa_page_has_block(page, (uintptr_t)block))
            break;
        block = fa_link_decode(block->link);
    }
    return n;
}

__attribute__((no_sanitize("thread"))) static void add_heap(const fa_heap_t *heap, void *arg)
{
    struct snapshot *snap = arg;
    for (size_t bin = 0; bin < FA_BINS; bin++) {
        snap->pending[bin] += (int64_t)heap->remote_frees[bin];
        /* A loan's blocks count as handed out (heap.c): those still on it are not. */
        snap->out->size_class[bin].allocs -= loan_length(heap->loan_page[bin], heap->loan[bin]);
    }
    snap->hot_reuses += heap->large_hot_reuses;
    /* Under _fa_global_lock: a hot mapping stays mapped at least until the lock is let go. */
    const fa_segment_t *hot = fa_atomic_load_acquire(&heap->large_hot);
    if (hot) {
        snap->hot_held++;
        snap->hot_held_bytes += hot->large_usable;
    }
}

FA_API int fa_stats_get(struct fa_stats *out)
{
    if (!out || out->size < sizeof *out)
        return -1;
    memset(out, 0, sizeof *out);
    out->size = sizeof *out;
    out->version = FA_STATS_VERSION;
    struct snapshot snap = {.out = out};
    for (size_t bin = 0; bin < FA_BINS; bin++) {
        uint64_t frees = fa_atomic_load_relaxed(&_fa_counters.bin_frees[bin]);
        out->size_class[bin].block_size = fa_bin_size(bin);
        out->size_class[bin].frees = frees;
        out->size_class[bin].allocs = frees;
        snap.pending[bin] = (int64_t)(fa_atomic_load_relaxed(&_fa_counters.remote_frees[bin]) -
                                      fa_atomic_load_relaxed(&_fa_counters.collected[bin]));
    }
    _fa_pages_foreach(add_page, &snap);
    _fa_heaps_foreach(add_heap, &snap);
#define FA_COUNTER_LOAD(name) uint64_t name = fa_atomic_load_relaxed(&_fa_counters.name);
    FA_COUNTERS(FA_COUNTER_LOAD)
#undef FA_COUNTER_LOAD
    for (size_t bin = 0; bin < FA_BINS; bin++) {
        struct fa_stats_class *c = &out->size_class[bin];
        /* Racing counters may make `pending` briefly negative or too big: clamp. */
        int64_t pending = snap.pending[bin];
        uint64_t live = c->allocs - c->frees;
        if (pending > 0)
            c->frees += (uint64_t)pending < live ? (uint64_t)pending : live;
        c->live = c->allocs - c->frees;
        out->allocs += c->allocs;
        out->frees += c->frees;
        out->bytes_in_use += c->live * c->block_size;
    }
    out->large_allocs = large_allocs + snap.hot_reuses;
    out->large_frees = large_frees + snap.hot_reuses + snap.hot_held;
    /* Counters read apart from the slots may disagree for a moment: never below zero. */
    out->large_in_use = large_in_use > snap.hot_held_bytes ? large_in_use - snap.hot_held_bytes : 0;
    out->allocs += out->large_allocs + zero_allocs;
    out->frees += out->large_frees + zero_frees;
    out->bytes_in_use += out->large_in_use;
    out->reserved = reserved;
    out->committed = committed;
    out->peak_committed = peak_committed;
    out->purged = purged;
    out->segments = segments;
    out->threads = threads;
    out->abandoned = abandoned;
    out->mesh_detached = mesh_detached;
    out->mesh_saved = mesh_saved;
    out->mesh_returned = mesh_returned;
    out->mesh_merges = mesh_merges;
    return 0;
}

/* The report, as text lines or (json) one JSON object on one line. */
void _fa_stats_print(int fd, bool json)
{
    struct fa_stats s;
    s.size = sizeof s;
    fa_stats_get(&s);
    const struct fa_report_row rows[] = {
        {"allocs", "allocs", s.allocs, false},
        {"frees", "frees", s.frees, false},
        {"in use", "bytes_in_use", s.bytes_in_use, true},
        {"large allocs", "large_allocs", s.large_allocs, false},
        {"large frees", "large_frees", s.large_frees, false},
        {"large in use", "large_in_use", s.large_in_use, true},
        {"reserved", "reserved", s.reserved, true},
        {"committed", "committed", s.committed, true},
        {"peak committed", "peak_committed", s.peak_committed, true},
        {"purged", "purged", s.purged, true},
        {"segments", "segments", s.segments, false},
        {"threads", "threads", s.threads, false},
        {"abandoned segments", "abandoned", s.abandoned, false},
        {"meshing: detached pages", "mesh_detached", s.mesh_detached, false},
        {"meshing: saved", "mesh_saved", s.mesh_saved, true},
        {"meshing: returned", "mesh_returned", s.mesh_returned, true},
        {"meshing: merges", "mesh_merges", s.mesh_merges, false},
    };
    if (json)
        _fa_message(fd, "{\"fitalloc\": {\"pid\": %d", _fa_os_pid());
    else
        _fa_message(fd, "fitalloc: statistics (pid %d)\n", _fa_os_pid());
    _fa_report_rows(fd, json, rows, sizeof rows / sizeof rows[0]);
    if (json)
        _fa_message(fd, ", \"size_classes\": [");
    else
        _fa_message(fd, "  %8s %14s %14s %12s\n", "block", "allocs", "frees", "live");
    bool first = true;
    for (size_t bin = 0; bin < FA_BINS; bin++) {
        const struct fa_stats_class *c = &s.size_class[bin];
        if (!c->allocs)
            continue;
        unsigned long long size = c->block_size, allocs = c->allocs, frees = c->frees,
                           live = c->live;
        if (json)
            _fa_message(fd,
                        "%s{\"block\": %llu, \"allocs\": %llu, \"frees\": %llu, \"live\": %llu}",
                        first ? "" : ", ", size, allocs, frees, live);
        else
            _fa_message(fd, "  %8llu %14llu %14llu %12llu\n", size, allocs, frees, live);
        first = false;
    }
    if (json)
        _fa_message(fd, "]}}\n");
}

FA_API void fa_stats_print(void)
{
    _fa_stats_print(2, false);
}

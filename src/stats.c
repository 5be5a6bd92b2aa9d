/* Statistics: global counters (internal.h), per-page counters summed on demand, and the
 * report printed by FITALLOC_STATS=1. */
#include <string.h>

#include "internal.h"
#include "options.h"
#include "size_class.h"
#include "fitalloc.h"

struct fa_counters _fa_counters;

void _fa_stats_commit(int64_t delta)
{
    uint64_t now = __atomic_add_fetch(&_fa_counters.committed, (uint64_t)delta, __ATOMIC_RELAXED);
    uint64_t peak = __atomic_load_n(&_fa_counters.peak_committed, __ATOMIC_RELAXED);
    while (delta > 0 && now > peak &&
           !__atomic_compare_exchange_n(&_fa_counters.peak_committed, &peak, now, true,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

/* Pages in use belong to other threads, whose counters change under us: the snapshot is
 * approximate by design (see fitalloc-stats.h), so the reads are deliberately unsynchronized. */
__attribute__((no_sanitize("thread"))) static void add_pages(fa_segment_t *seg, void *arg)
{
    struct fa_stats *out = arg;
    for (size_t i = 0; i < seg->page_count; i++) {
        const fa_page_t *page = &seg->pages[i];
        if (__atomic_load_n(&page->state, __ATOMIC_ACQUIRE) != FA_PAGE_USED)
            continue;
        struct fa_stats_class *c = &out->size_class[page->bin];
        /* Remote frees not yet collected are still in `used` but already free. */
        uint32_t pending = __atomic_load_n(&page->xfrees, __ATOMIC_RELAXED) - page->xcollected;
        uint64_t live = (uint64_t)page->used - page->pinned - pending;
        c->frees += page->frees + pending;
        c->allocs += page->frees + pending + live;
    }
}

FA_API int fa_stats_get(struct fa_stats *out)
{
    if (!out || out->size < sizeof *out)
        return -1;
    memset(out, 0, sizeof *out);
    out->size = sizeof *out;
    out->version = FA_STATS_VERSION;
    for (size_t bin = 0; bin < FA_BINS; bin++) {
        uint64_t frees = __atomic_load_n(&_fa_counters.bin_frees[bin], __ATOMIC_RELAXED);
        out->size_class[bin].block_size = fa_bin_size(bin);
        out->size_class[bin].frees = frees;
        out->size_class[bin].allocs = frees;
    }
    _fa_segments_foreach(add_pages, out);
#define FA_COUNTER_LOAD(name) uint64_t name = __atomic_load_n(&_fa_counters.name, __ATOMIC_RELAXED);
    FA_COUNTERS(FA_COUNTER_LOAD)
#undef FA_COUNTER_LOAD
    for (size_t bin = 0; bin < FA_BINS; bin++) {
        struct fa_stats_class *c = &out->size_class[bin];
        c->live = c->allocs - c->frees;
        out->allocs += c->allocs;
        out->frees += c->frees;
        out->bytes_in_use += c->live * c->block_size;
    }
    out->large_allocs = large_allocs;
    out->large_frees = large_frees;
    out->large_in_use = large_in_use;
    out->allocs += large_allocs;
    out->frees += large_frees;
    out->bytes_in_use += large_in_use;
    out->reserved = reserved;
    out->committed = committed;
    out->peak_committed = peak_committed;
    out->purged = purged;
    out->segments = segments;
    out->threads = threads;
    out->abandoned = abandoned;
    return 0;
}

void _fa_stats_print(int fd)
{
    struct fa_stats s;
    s.size = sizeof s;
    fa_stats_get(&s);
    _fa_message(fd,
                "fitalloc: statistics (pid %d)\n"
                "  allocs: %llu\n"
                "  frees: %llu\n"
                "  in use: %llu bytes\n"
                "  large allocs: %llu\n"
                "  large frees: %llu\n"
                "  large in use: %llu bytes\n"
                "  reserved: %llu bytes\n"
                "  committed: %llu bytes\n"
                "  peak committed: %llu bytes\n"
                "  purged: %llu bytes\n"
                "  segments: %llu\n"
                "  threads: %llu\n"
                "  abandoned segments: %llu\n",
                _fa_os_pid(), (unsigned long long)s.allocs, (unsigned long long)s.frees,
                (unsigned long long)s.bytes_in_use, (unsigned long long)s.large_allocs,
                (unsigned long long)s.large_frees, (unsigned long long)s.large_in_use,
                (unsigned long long)s.reserved, (unsigned long long)s.committed,
                (unsigned long long)s.peak_committed, (unsigned long long)s.purged,
                (unsigned long long)s.segments, (unsigned long long)s.threads,
                (unsigned long long)s.abandoned);
    _fa_message(fd, "  %8s %14s %14s %12s\n", "block", "allocs", "frees", "live");
    for (size_t bin = 0; bin < FA_BINS; bin++) {
        const struct fa_stats_class *c = &s.size_class[bin];
        if (c->allocs)
            _fa_message(fd, "  %8llu %14llu %14llu %12llu\n", (unsigned long long)c->block_size,
                        (unsigned long long)c->allocs, (unsigned long long)c->frees,
                        (unsigned long long)c->live);
    }
}

FA_API void fa_stats_print(void)
{
    _fa_stats_print(2);
}

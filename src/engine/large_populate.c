/* The fresh pages of a large block: faulted in at once, or left to the program's first touch.
 *
 * A large block's fresh pages are zero already, so calloc does not write them: the kernel maps
 * each one at its first touch. A program that reads its zeros before writing them (a buffer
 * checked, a table summed) takes two faults per page that way (the shared zero page first, a
 * copy of it at the write), and one that writes first still takes a trap per page. Asking the
 * kernel to fault the whole range in at once (_fa_os_populate) takes none, but a program that
 * callocs a big table and touches little of it (numpy.zeros does that) would then hold all of
 * it. So fitalloc watches what the program does with the large blocks (malloc'd or calloc'd)
 * it leaves alone: when one of them is freed, it counts its resident pages. After one that was
 * used nearly whole (7/8 of its pages), the program is taken to use its large blocks whole:
 * spare pages (large_spare.c: resident already, cheaper than fresh ones even when calloc
 * clears them) stand in for fresh ones, and large callocs fault the rest in at once; after one
 * used less than half, both stop. Meanwhile every FA_POPULATE_PROBE-th block that could be
 * watched (all of it fresh) is still left alone, to keep watching (a populated block is
 * resident whatever the program did with it, and so is one that holds old data). At start
 * the blocks are left alone. FITALLOC_CALLOC_POPULATE=0 turns the watching off, and with it
 * populating and spare pages. docs/bench.md ("buffers") has the measurements.
 */
#include "common/options.h"
#include "engine/engine.h"
#include "platform/atomic.h"

#define FA_POPULATE_PROBE 8

static bool populating; /* what the last block watched taught */
/* Large callocs that could be watched, made while populating (relaxed: a rough period will
 * do). */
static unsigned populate_count;

bool _fa_large_used_whole(void)
{
    return fa_option(calloc_populate) && fa_atomic_load_relaxed(&populating);
}

bool _fa_large_probe(void)
{
    return fa_atomic_add_relaxed(&populate_count, 1) % FA_POPULATE_PROBE == 0;
}

void _fa_large_watch(fa_segment_t *seg, size_t fresh)
{
    /* Only a block all fresh says what the program touched: memory a reused mapping held is
     * resident whatever the program does. */
    seg->watched = fa_option(calloc_populate) &&
                   fresh <= fa_align_up(seg->large_block - (uintptr_t)seg, FA_OS_PAGE);
}

void _fa_large_populate(fa_segment_t *seg, size_t fresh, size_t end)
{
    fresh = fa_align_up(fresh, FA_OS_PAGE); /* fresh <= end: no overflow */
    end = fa_align_up(end, FA_OS_PAGE);
    if (fresh < end)
        _fa_os_populate((char *)seg + fresh, end - fresh);
}

void _fa_large_watched_freed(const fa_segment_t *seg)
{
    /* the pages the request covers (not the slack of a bigger mapping reused for it) */
    uintptr_t from = fa_align_up(seg->large_block, FA_OS_PAGE);
    uintptr_t to = (seg->large_block + seg->large_usable - seg->large_slack) & ~(FA_OS_PAGE - 1);
    if (to <= from)
        return;
    size_t pages = (to - from) / FA_OS_PAGE;
    size_t resident = _fa_os_resident_pages((void *)from, to - from);
    if (resident >= pages - pages / 8)
        fa_atomic_store_relaxed(&populating, true);
    else if (resident < pages / 2)
        fa_atomic_store_relaxed(&populating, false);
}

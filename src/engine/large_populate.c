/* The fresh pages of a large block: faulted in at once, or left to the program's first touch.
 *
 * A large block's fresh pages are zero already, so calloc does not write them: the kernel maps
 * each one at its first touch. A program that reads its zeros before writing them (a buffer
 * checked, a table summed) takes two faults per page that way (the shared zero page first, a
 * copy of it at the write), and one that writes first still takes a trap per page. Asking the
 * kernel to fault the whole range in at once (_fa_os_populate) takes none, but a program that
 * callocs a big table and touches little of it (numpy.zeros does that) would then hold all of
 * it. So fitalloc watches what the program does with the large blocks (malloc'd or calloc'd)
 * it leaves alone: when one of them is freed, it counts its resident pages, and it looks at the
 * last one once more when the next large block is made (a program that fills each buffer
 * before it asks for the next shows it then, before any free). After one that was used nearly
 * whole (7/8 of its pages), the program is taken to use its large blocks whole: a large
 * calloc clears the memory a reused mapping held in place (its pages stay resident) rather
 * than dropping it, and faults the fresh pages in at once; after one used less than half, both
 * stop. Callocs are faulted in only after a calloc'd block was used whole, learnt from calloc'd
 * blocks alone: xz fills its malloc'd buffers whole but touches a part of its calloc'd hash
 * tables (record 045). Meanwhile every FA_POPULATE_PROBE-th block that could be watched (all
 * of it fresh) is still left alone, to keep watching (a populated block is resident whatever
 * the program did with it, and so is one that holds old data). At start the blocks are left
 * alone. FITALLOC_CALLOC_POPULATE=0 turns the watching off, and with it populating. Records
 * 005 and 039 have the measurements.
 */
#include "common/options.h"
#include "engine/engine.h"
#include "platform/atomic.h"

#define FA_POPULATE_PROBE 8
#define FA_USAGE_CHUNK ((size_t)2 << 20)

/* What the last block watched taught: of any sort ([ANY]), and of those calloc'd ([CALLOC]). */
enum { ANY, CALLOC };
static bool populating[2];
/* Large blocks that could be watched, made while populating (relaxed: a rough period will
 * do). */
static unsigned populate_count;
/* The whole pages of the block watched last, until the next large block is made or it is
 * freed (0: none). */
static uintptr_t watch_from, watch_to;
static bool watch_zero; /* whether that block was calloc'd */

/* The whole pages of a block's request (not the slack of a bigger mapping reused for it). */
static void request_pages(const fa_segment_t *seg, uintptr_t *from, uintptr_t *to)
{
    *from = fa_align_up(seg->large_block, FA_OS_PAGE);
    *to = (seg->large_block + seg->large_usable - seg->large_slack) & ~(FA_OS_PAGE - 1);
}

/* What pages [from, to) teach, from their resident pages: populating after a block used nearly
 * whole (7/8 of its pages), not after one used less than half. Counted (mincore) 2 MiB at a
 * time, and only until the count can no longer change the state: a page table walk costs
 * about as much as the program's own use of a block it touches sparsely. */
static void learn_into(bool *state, uintptr_t from, uintptr_t to)
{
    if (to <= from)
        return;
    size_t pages = (to - from) / FA_OS_PAGE;
    size_t whole = pages - pages / 8, little = pages / 2; /* resident >= whole, < little */
    bool now = fa_atomic_load_relaxed(state);
    size_t resident = 0, seen = 0;
    for (uintptr_t at = from; at < to;) {
        size_t len = to - at < FA_USAGE_CHUNK ? to - at : FA_USAGE_CHUNK;
        resident += _fa_os_resident_pages((void *)at, len);
        seen += len / FA_OS_PAGE;
        at += len;
        if (now ? resident >= little : seen - resident > pages - whole)
            return;
    }
    if (now ? resident < little : resident >= whole)
        fa_atomic_store_relaxed(state, !now);
}

static void learn_from(uintptr_t from, uintptr_t to, bool zero)
{
    learn_into(&populating[ANY], from, to);
    if (zero)
        learn_into(&populating[CALLOC], from, to);
}

bool _fa_large_used_whole(void)
{
    return fa_option(calloc_populate) && fa_atomic_load_relaxed(&populating[ANY]);
}

bool _fa_large_callocs_whole(void)
{
    return fa_option(calloc_populate) && fa_atomic_load_relaxed(&populating[CALLOC]);
}

bool _fa_large_learn(void)
{
    if (!fa_option(calloc_populate))
        return false;
    if (!fa_atomic_load_relaxed(&populating[ANY]) || !fa_atomic_load_relaxed(&populating[CALLOC])) {
        /* A program that uses each block before it asks for the next one shows it before any
         * free: look at the block watched last, once. (If it was freed meanwhile and its
         * pages reused, the look only misleads this guess; the next block watched corrects
         * it.) */
        uintptr_t from = fa_atomic_exchange_relaxed(&watch_from, (uintptr_t)0);
        if (from)
            learn_from(from, fa_atomic_load_relaxed(&watch_to),
                       fa_atomic_load_relaxed(&watch_zero));
    }
    return fa_atomic_load_relaxed(&populating[ANY]);
}

bool _fa_large_probe(void)
{
    return fa_atomic_add_relaxed(&populate_count, 1) % FA_POPULATE_PROBE == 0;
}

void _fa_large_watch(fa_segment_t *seg, size_t fresh, bool zero)
{
    /* Only a block all fresh says what the program touched: memory a reused mapping held is
     * resident whatever the program does. */
    bool watch = fa_option(calloc_populate) &&
                 fresh <= fa_align_up(seg->large_block - (uintptr_t)seg, FA_OS_PAGE);
    seg->watched = watch ? (uint8_t)(1 + zero) : 0; /* 2: a calloc'd block */
    if (watch) {
        uintptr_t from, to;
        request_pages(seg, &from, &to);
        fa_atomic_store_relaxed(&watch_to, to);
        fa_atomic_store_relaxed(&watch_zero, zero);
        fa_atomic_store_relaxed(&watch_from, from);
    }
}

void _fa_large_unwatch(fa_segment_t *seg)
{
    uintptr_t from, to;
    request_pages(seg, &from, &to);
    fa_atomic_cas_relaxed(&watch_from, &from, (uintptr_t)0); /* if it is this block's */
    seg->watched = 0;
}

void _fa_large_populate(fa_segment_t *seg, size_t fresh, size_t end)
{
    fresh = fa_align_up(fresh, FA_OS_PAGE); /* fresh <= end: no overflow */
    end = fa_align_up(end, FA_OS_PAGE);
    if (fresh < end)
        _fa_os_populate((char *)seg + fresh, end - fresh);
}

void _fa_large_watched_freed(fa_segment_t *seg)
{
    uintptr_t from, to;
    request_pages(seg, &from, &to);
    bool zero = seg->watched == 2;
    _fa_large_unwatch(seg);
    learn_from(from, to, zero);
}

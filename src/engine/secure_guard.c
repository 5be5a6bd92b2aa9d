/* Secure mode's guard pages, and the report of an access that lands in one.
 *
 * Every segment set up in secure mode has an inaccessible page at the end of each of its pages
 * and one before its first page (the header's last page, which holds no descriptor):
 *
 *   | header | guard | page 0 ... | guard | page 1 ... | guard | ... | page n ... | guard |
 *
 * so a linear write running past the blocks of a page, forwards or backwards (a runaway copy,
 * a loop over a wrong length), faults before it reaches the next page. A page serves no block
 * in its guard (page.c: `reserved`). The guards are set once, when the segment is registered;
 * purging leaves them (madvise keeps a page's protection), and small and medium segments are
 * never unmapped. Large blocks have their own guards (secure.c), as does malloc(0)
 * (secure_zero.c).
 *
 * A fault in a guard, in a quarantined large block or in malloc(0)'s region reaches
 * guard_fault through the SIGSEGV hook of platform/fault.c (meshing's hook comes first when
 * meshing is on), which reports it with the blocks around it and stops the program; any other
 * fault goes on to the program's own handler. The report reads only page descriptors and the
 * segment map, which the program cannot reach by running off a block.
 */
#include "engine/engine.h"
#include "platform/atomic.h"

/* The first and last blocks of seg's page `index` and their size; false if the page serves no
 * size class (or there is no such page). */
static bool page_blocks(fa_segment_t *seg, size_t index, uintptr_t *first, uintptr_t *last,
                        uint32_t *size)
{
    if (index >= seg->page_count)
        return false;
    fa_page_t *page = &seg->pages[index];
    if (fa_atomic_load_relaxed(&page->state) != FA_PAGE_USED || !page->reserved)
        return false;
    *size = page->block_size;
    *first = page->start;
    *last = page->start + (uintptr_t)(page->reserved - 1) * page->block_size;
    return true;
}

FA_REPORT static void report_page_guard(fa_segment_t *seg, uintptr_t a, size_t index)
{
    /* The guard ends page `index` (or the header, index SIZE_MAX): it follows that page's last
     * block and comes before the first block of the next page, when they serve a size class. */
    uintptr_t first, last, b = 0, f = 0;
    uint32_t size_b = 0, size_f = 0;
    if (index != SIZE_MAX && page_blocks(seg, index, &first, &last, &size_b))
        b = last;
    if (page_blocks(seg, index == SIZE_MAX ? 0 : index + 1, &first, &last, &size_f))
        f = first;
    const char *what = "fitalloc: heap overflow or underflow into the guard page at";
    if (b && f)
        _fa_fatal("%s %p, after the %u-byte block at %p, before the %u-byte block at %p\n", what,
                  (void *)a, size_b, (void *)b, size_f, (void *)f);
    if (b)
        _fa_fatal("%s %p, after the %u-byte block at %p\n", what, (void *)a, size_b, (void *)b);
    if (f)
        _fa_fatal("%s %p, before the %u-byte block at %p\n", what, (void *)a, size_f, (void *)f);
    _fa_fatal("%s %p, between two free pages\n", what, (void *)a);
}

/* An access fault at a: reported (no return) if it is secure mode's, else false. */
static bool guard_fault(uintptr_t a)
{
    _fa_secure_zero_fault(a);
    _fa_secure_large_fault(a);
    size_t chunk = a >> FA_SEG_SHIFT;
    if (chunk >= FA_SEGMAP_SIZE || !fa_map_is_segment(fa_atomic_load_acquire(&_fa_segmap[chunk])))
        return false;
    fa_segment_t *seg = (fa_segment_t *)(a & ~FA_SEG_MASK);
    if (!seg->secure || seg->kind == FA_SEG_LARGE)
        return false;
    uintptr_t off = a - (uintptr_t)seg;
    size_t first = _fa_segment_first_offset(seg->kind);
    if (off < first - FA_OS_PAGE)
        return false;
    if (off < first)
        report_page_guard(seg, a, SIZE_MAX);
    size_t index = off >> seg->page_shift;
    size_t page_end = (index + 1) << seg->page_shift;
    if (off < page_end - FA_OS_PAGE)
        return false;
    report_page_guard(seg, a, index);
}

void _fa_secure_guard_hook(void)
{
    _fa_os_fault_hook(guard_fault);
}

void _fa_secure_guard_segment(fa_segment_t *seg)
{
    size_t first = _fa_segment_first_offset(seg->kind);
    FA_ASSERT(fa_align_up(sizeof(fa_segment_t) + seg->page_count * sizeof(fa_page_t), FA_OS_PAGE) <=
              first - FA_OS_PAGE);
    char *base = (char *)seg;
    _fa_os_protect(base + first - FA_OS_PAGE, FA_OS_PAGE);
    size_t page_size = (size_t)1 << seg->page_shift;
    for (size_t i = 0; i < seg->page_count; i++)
        _fa_os_protect(base + (i + 1) * page_size - FA_OS_PAGE, FA_OS_PAGE);
    seg->secure = 1;
    /* Again for each segment: the program may have put its own handler in ours' place. */
    _fa_secure_guard_hook();
}

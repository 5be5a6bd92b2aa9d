/* Secure mode's guard pages, and the report of an access that lands in one.
 *
 * Every segment set up in secure mode has an inaccessible page at the end of each of its pages
 * and one before its first page (the header's last page, which holds no descriptor):
 *
 *   | header | guard | page 0 ... | guard | page 1 ... | guard | ... | page n ... | guard |
 *
 * so a linear write running past the blocks of a page, forwards or backwards (a runaway copy,
 * a loop over a wrong length), faults before it reaches the next page. A page serves no block
 * in its guard (page.c: `reserved`). The guards are set when the segment is registered (a
 * segment of another kind coming back from the cold list loses its former ones); purging
 * leaves them (madvise keeps a page's protection). A big page (blocks of 128 to 512 KiB) also
 * ends each of its blocks in a guard page, set when the page takes its size class (secure.c
 * keeps the trailer before it): a big block then has a guard page on each side. Large blocks
 * have their own guards (secure.c), as does malloc(0) (secure_zero.c). Kernels with pages
 * larger than 4 KiB (some aarch64 ones) get none (_fa_secure_guards): a 4 KiB mprotect there
 * would round up over blocks.
 *
 * A fault in a guard, in a quarantined big or large block or in malloc(0)'s region reaches
 * guard_fault through the SIGSEGV handler of platform/fault.c; it reports it with
 * the blocks around it and stops the program. Any other fault goes on to the program's own
 * handler. The report reads only page descriptors, the segment map and large blocks' headers,
 * which a write running off a block meets a guard page before reaching.
 */
#include "engine/secure/secure.h"
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

/* The guard at a follows the b_size-byte block at b and comes before the f_size-byte block at
 * f (either may be 0: no block there). */
FA_REPORT static void report_guard(uintptr_t a, uint32_t b_size, uintptr_t b, uint32_t f_size,
                                   uintptr_t f)
{
    const char *what = "fitalloc: heap overflow or underflow into the guard page at";
    if (b && f)
        _fa_fatal("%s %p, after the %u-byte block at %p, before the %u-byte block at %p\n", what,
                  (void *)a, b_size, (void *)b, f_size, (void *)f);
    if (b)
        _fa_fatal("%s %p, after the %u-byte block at %p\n", what, (void *)a, b_size, (void *)b);
    if (f)
        _fa_fatal("%s %p, before the %u-byte block at %p\n", what, (void *)a, f_size, (void *)f);
    _fa_fatal("%s %p, between two free pages\n", what, (void *)a);
}

/* The guard ending page `index` (or the header, index SIZE_MAX): after that page's last
 * block, before the first block of the next page, when they serve a size class. */
FA_REPORT static void report_page_guard(fa_segment_t *seg, uintptr_t a, size_t index)
{
    uintptr_t first, last, b = 0, f = 0;
    uint32_t b_size = 0, f_size = 0;
    if (index != SIZE_MAX && page_blocks(seg, index, &first, &last, &b_size))
        b = last;
    if (page_blocks(seg, index == SIZE_MAX ? 0 : index + 1, &first, &last, &f_size))
        f = first;
    report_guard(a, b_size, b, f_size, f);
}

/* In a big page serving a size class: the guard ending each block, and a block waiting in the
 * quarantine, inaccessible past its first page (secure.c). */
static void big_block_fault(fa_segment_t *seg, size_t index, uintptr_t a)
{
    uintptr_t first, last;
    uint32_t size;
    if (!page_blocks(seg, index, &first, &last, &size) || a < first || a >= last + size)
        return;
    uintptr_t b = first + (a - first) / size * size;
    if (a - b >= size - FA_OS_PAGE)
        report_guard(a, size, b, b < last ? size : 0, b < last ? b + size : 0);
    if (a - b >= FA_OS_PAGE) {
        _fa_secure_refree_fault(b, size);
        _fa_fatal("fitalloc: read or write after free at %p, in the freed %u-byte block at %p\n",
                  (void *)a, size, (void *)b);
    }
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
    if (!seg->by_mode || seg->kind == FA_SEG_LARGE)
        return false;
    uintptr_t off = a - (uintptr_t)seg;
    size_t first = _fa_segment_first_offset(seg->kind);
    if (off < first - FA_OS_PAGE)
        return false;
    if (off < first)
        report_page_guard(seg, a, SIZE_MAX);
    size_t index = off >> seg->page_shift;
    size_t page_end = (index + 1) << seg->page_shift;
    if (off >= page_end - FA_OS_PAGE)
        report_page_guard(seg, a, index);
    if (seg->kind == FA_SEG_BIG)
        big_block_fault(seg, index, a);
    return false;
}

bool _fa_secure_guards;

void _fa_secure_guard_init(void)
{
    _fa_secure_guards = _fa_os_page_size() == FA_OS_PAGE;
    _fa_os_fault_hook(guard_fault);
}

void _fa_secure_guard_segment(fa_segment_t *seg)
{
    if (!_fa_secure_guards)
        return;
    size_t first = _fa_segment_first_offset(seg->kind);
    FA_ASSERT(fa_align_up(fa_segment_index_offset(seg) + FA_SEG_INDEX_SIZE, FA_OS_PAGE) <=
              first - FA_OS_PAGE);
    char *base = (char *)seg;
    /* A cold segment may come back as another kind: its former guards go first. */
    _fa_os_unprotect(base + FA_OS_PAGE, FA_SEG_SIZE - FA_OS_PAGE);
    _fa_os_protect(base + first - FA_OS_PAGE, FA_OS_PAGE);
    size_t page_size = (size_t)1 << seg->page_shift;
    for (size_t i = 0; i < seg->page_count; i++)
        _fa_os_protect(base + (i + 1) * page_size - FA_OS_PAGE, FA_OS_PAGE);
    seg->by_mode = 1;
    /* Again for each segment: the program may have put its own handler in ours' place. */
    _fa_os_fault_hook(guard_fault);
}

void _fa_secure_guard_blocks(fa_page_t *page, uintptr_t end)
{
    if (!_fa_secure_guards || fa_bin_kind(page->bin) != FA_SEG_BIG)
        return;
    _fa_os_unprotect((void *)page->start, end - page->start); /* the guards of a former class */
    for (size_t i = 1; i <= page->reserved; i++)
        _fa_os_protect((void *)(page->start + i * page->block_size - FA_OS_PAGE), FA_OS_PAGE);
}

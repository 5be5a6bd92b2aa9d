/* Secure mode's guard pages, and the report of an access that lands in one.
 *
 * A secure segment is closed (inaccessible) past its header when it is mapped (segment.c);
 * only the memory of the blocks its pages provision is opened:
 *
 *   | header | guard | page 0 ... | guard | page 1 ... | guard | ... | page n ... | guard |
 *
 * A small or medium page opens its blocks' room whole when it provisions its first ones, up to
 * the guard page ending it (it never serves a block there: page.c's `reserved`); so a linear
 * write running past the blocks of a page, forwards or backwards (a runaway copy, a loop over a
 * wrong length), faults before it reaches the next page, and pages not taken yet stay closed:
 * a write 1 MiB past a small or medium block lands 16 or 2 pages further, closed unless the
 * program uses that many. A page of big blocks (128 to 512 KiB, 2 MiB pages) serves only the
 * blocks that leave 1 MiB of it closed after the last one (`big_page_far`, page.c: 2 to 6
 * blocks, the first held back), their room opened when the page takes its size class, each up
 * to the guard page its last page is: a write up to 1 MiB past a big block faults, whatever the
 * program holds (address space, not memory), but from the second 512 KiB block of a segment's
 * first page (the header shortens it). A page taking another size class is closed again
 * first; one taking its former class again is as it was. Large blocks have their own guards
 * (secure.c), as does malloc(0) (secure_zero.c). Kernels with pages larger than 4 KiB (some
 * aarch64 ones) get none (_fa_secure_guards): a 4 KiB mprotect there would round up over
 * blocks.
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

/* Memory of a page that no block holds: not provisioned, or what follows a big page's block
 * (all closed). Reported with the last block before it in its page, if any. */
FA_REPORT static void report_closed(fa_segment_t *seg, size_t index, uintptr_t a)
{
    uintptr_t first, last;
    uint32_t size;
    const char *what = "fitalloc: heap overflow or underflow into closed memory at";
    if (page_blocks(seg, index, &first, &last, &size) && a >= first) {
        uintptr_t b = a >= last ? last : first + (a - first) / size * size;
        _fa_fatal("%s %p, %zu bytes past the %u-byte block at %p\n", what, (void *)a,
                  (size_t)(a - b - size), size, (void *)b);
    }
    _fa_fatal("%s %p, in a page that serves no block\n", what, (void *)a);
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
    report_closed(seg, index, a);
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
    /* Closed past its header already (segment.c): its guard pages are memory never opened.
     * Its pages open their own blocks' memory (_fa_secure_provision), not the core's
     * boundary. */
    seg->opened = FA_SEG_SIZE;
    seg->by_mode = 1;
    /* Again for each segment: the program may have put its own handler in ours' place. */
    _fa_os_fault_hook(guard_fault);
}

void _fa_secure_guard_blocks(fa_page_t *page, uintptr_t end)
{
    if (!_fa_secure_guards || fa_bin_kind(page->bin) != FA_SEG_BIG)
        return;
    _fa_os_protect((void *)page->start, end - page->start);
    for (size_t i = 0; i < page->reserved; i++)
        if (!_fa_os_commit((void *)(page->start + i * page->block_size),
                           page->block_size - FA_OS_PAGE))
            page->reserved = (uint16_t)i; /* out of memory: no block past it */
}

bool _fa_secure_provision(fa_page_t *page)
{
    return fa_bin_kind(page->bin) == FA_SEG_BIG || page->capacity ||
           _fa_os_commit((void *)page->start,
                         fa_align_up((size_t)page->reserved * page->block_size, FA_OS_PAGE));
}

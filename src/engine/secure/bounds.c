/* Where the fitalloc block holding an address ends, for the checked copies of secure mode
 * (override/copies.c): memcpy, memmove and memset into a block must stay inside it. Found as
 * malloc_usable_size finds a block, from the segment map, but for any address in the block, not
 * only its start. Nothing here runs in the default mode. */
#include "engine/free_list.h"
#include "engine/secure/secure.h"
#include "platform/atomic.h"

/* The block whose room (up to the next block's start, or a large mapping's end) holds an
 * address: its start and the bytes asked for (the block's size outside secure mode); `slot`,
 * the block's whole room, when the block is not live (free, in a quarantine, never handed
 * out), else 0. */
struct bounds {
    uintptr_t start;
    size_t size, slot;
};

static bool large_bounds(const fa_segment_t *seg, uintptr_t a, struct bounds *b)
{
    uintptr_t block = fa_atomic_load_acquire(&seg->large_block);
    if (!block || a < block || a - (uintptr_t)seg >= seg->mapped)
        return false;
    *b = (struct bounds){block, seg->large_usable, 0};
    return true;
}

static bool find_bounds(uintptr_t a, struct bounds *b)
{
    size_t chunk = a >> FA_SEG_SHIFT;
    if (chunk >= FA_SEGMAP_SIZE)
        return false;
    fa_map_entry_t entry = fa_atomic_load_acquire(&_fa_segmap[chunk]);
    if (entry == FA_MAP_INTERIOR) {
        const fa_segment_t *seg = _fa_large_header(a);
        return seg && large_bounds(seg, a, b);
    }
    if (!fa_map_is_segment(entry))
        return false;
    const fa_segment_t *seg = (const fa_segment_t *)(a & ~FA_SEG_MASK);
    if (seg->kind == FA_SEG_LARGE)
        return large_bounds(seg, a, b);
    const fa_page_t *page = &seg->pages[(a - (uintptr_t)seg) >> seg->page_shift];
    if (fa_atomic_load_acquire(&page->state) != FA_PAGE_USED || a < page->start)
        return false;
    size_t index = (a - page->start) / page->block_size;
    if (index >= fa_atomic_load_relaxed(&page->capacity))
        return false;
    uintptr_t block = page->start + index * page->block_size;
    size_t size = page->by_mode ? _fa_secure_request(page, block) : page->block_size;
    /* A block of a secure page that is not live (its size word says 0 bytes, or freed). A copy
     * into it is a write after free, or one that started before the block it was meant for,
     * in the slot before it (an underflow): stopped, wherever it ends. */
    *b = (struct bounds){block, size, page->by_mode && size == 0 ? page->block_size : 0};
    return true;
}

void _fa_copy_check(const char *caller, const void *dst, size_t len)
{
    uintptr_t d = (uintptr_t)dst;
    struct bounds b;
    if (!len || !find_bounds(d, &b))
        return;
    if (b.slot)
        _fa_fatal("fitalloc: %s(): write after free (or before a block) of %zu byte%s at %p, in "
                  "the free %zu-byte slot at %p\n",
                  caller, len, len == 1 ? "" : "s", dst, b.slot, (void *)b.start);
    /* The copy's end, from the block's start; a length that wraps is past the end too. */
    size_t offset = d - b.start;
    if (len <= b.size && offset <= b.size - len)
        return;
    size_t past = len > SIZE_MAX - offset ? SIZE_MAX - b.size : offset + len - b.size;
    _fa_fatal("fitalloc: %s(): %zu byte%s past the end of the %zu-byte block at %p\n", caller, past,
              past == 1 ? "" : "s", b.size, (void *)b.start);
}

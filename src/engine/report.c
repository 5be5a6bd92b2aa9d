/* Reports of misuse: invalid pointers, double frees and free lists overwritten by the program.
 * Each prints one line naming the caller and the pointer and aborts (SIGABRT). To tell a
 * double free from a pointer that was never a block, it keeps a short record of recently freed
 * large blocks (whose mappings may be gone) and reads the geometry that released pages keep. */
#include "fitalloc.h"
#include "engine/free_list.h"
#include "platform/atomic.h"

#define FA_FREED_LARGE_RECORD 64

static struct {
    uintptr_t block;
    size_t size;
} freed_large[FA_FREED_LARGE_RECORD] FA_BSS_APART;
static unsigned freed_large_next;

void _fa_large_freed(uintptr_t block, size_t size)
{
    unsigned i = freed_large_next++ % FA_FREED_LARGE_RECORD; /* under _fa_global_lock */
    fa_atomic_store_relaxed(&freed_large[i].block, 0);
    fa_atomic_store_relaxed(&freed_large[i].size, size);
    fa_atomic_store_release(&freed_large[i].block, block);
}

/* The size of the block p was, if p is a block fitalloc has handed out and taken back; else 0. */
static size_t freed_block_size(uintptr_t p)
{
    for (size_t i = 0; i < FA_FREED_LARGE_RECORD; i++)
        if (fa_atomic_load_acquire(&freed_large[i].block) == p)
            return fa_atomic_load_relaxed(&freed_large[i].size);
    size_t chunk = p >> FA_SEG_SHIFT;
    if (chunk >= FA_SEGMAP_SIZE || !fa_map_is_segment(fa_atomic_load_acquire(&_fa_segmap[chunk])))
        return 0;
    fa_segment_t *seg = (fa_segment_t *)(p & ~FA_SEG_MASK);
    if (seg->kind == FA_SEG_LARGE) /* the block freed in the mapping before its current one */
        return p == seg->large_prev ? seg->large_usable : 0;
    /* A released page keeps its geometry until it serves another size class. */
    fa_page_t *page = &seg->pages[(p & FA_SEG_MASK) >> seg->page_shift];
    if (fa_atomic_load_acquire(&page->state) == FA_PAGE_USED || page->magic == 0)
        return 0;
    uint64_t every_block = page->reserved * (page->magic * page->block_size);
    return (p - page->start) * page->magic < every_block ? page->block_size : 0;
}

void _fa_bad_pointer(const char *caller, const void *p)
{
    size_t size = freed_block_size((uintptr_t)p);
    if (size)
        _fa_double_free(caller, p, size);
    _fa_invalid_pointer(caller, p);
}

void _fa_free_list_corrupt(const fa_page_t *page, const char *list)
{
    _fa_fatal("fitalloc: heap corruption in the %s of the %u-byte page at %p\n", list,
              page->block_size, (void *)page->start);
}

void _fa_overflow_into_fresh(const fa_page_t *page, const void *at)
{
    uintptr_t a = (uintptr_t)at;
    if (a > page->start)
        _fa_fatal("fitalloc: malloc(): heap overflow past the %u-byte block at %p (into memory "
                  "not handed out yet)\n",
                  page->block_size, (void *)(a - page->block_size));
    _fa_fatal("fitalloc: malloc(): heap overflow into the %u-byte page at %p (memory not handed "
              "out yet)\n",
              page->block_size, at);
}

/* Pages: set up for a size class, build the free list lazily, collect remote frees, and tell
 * whether an address is the start of one of its blocks. */
#include <string.h>

#include "internal.h"
#include "size_class.h"

/* The free list is built a few blocks at a time, touching at most this much memory per step:
 * a page that serves few blocks costs only the memory of those blocks. */
#define FA_EXTEND_BYTES 4096

void _fa_page_init(fa_page_t *page, fa_heap_t *heap, size_t bin)
{
    fa_segment_t *seg = (fa_segment_t *)((uintptr_t)page & ~FA_SEG_MASK);
    size_t index = (size_t)(page - seg->pages);
    size_t page_size = (size_t)1 << seg->page_shift;
    uintptr_t base = (uintptr_t)seg + (index << seg->page_shift);
    uintptr_t start = index ? base : (uintptr_t)seg + _fa_segment_first_offset(seg->kind);
    page->block_size = (uint32_t)fa_bin_size(bin);
    page->bin = (uint8_t)bin;
    page->start = start;
    page->reserved = (uint16_t)((base + page_size - start) / page->block_size);
    page->capacity = 0;
    page->free = NULL;
    page->used = 0;
    page->frees = 0;
    page->pinned = 0;
    page->xcollected = 0;
    page->next = page->prev = NULL;
    __atomic_store_n(&page->xfree, NULL, __ATOMIC_RELAXED);
    __atomic_store_n(&page->owner, (uintptr_t)heap, __ATOMIC_RELEASE);
}

bool _fa_page_extend(fa_page_t *page)
{
    if (page->capacity >= page->reserved)
        return false;
    size_t size = page->block_size;
    size_t count = FA_EXTEND_BYTES / size;
    if (count == 0)
        count = 1;
    if (count > (size_t)(page->reserved - page->capacity))
        count = page->reserved - page->capacity;
    char *first = (char *)page->start + (size_t)page->capacity * size;
    char *last = first + (count - 1) * size;
    for (char *b = first; b < last; b += size)
        ((fa_block_t *)b)->next = (fa_block_t *)(b + size);
    ((fa_block_t *)last)->next = page->free;
    page->free = (fa_block_t *)first;
    /* Other threads read capacity to validate the pointers they free. */
    __atomic_store_n(&page->capacity, (uint16_t)(page->capacity + count), __ATOMIC_RELAXED);
    return true;
}

void _fa_page_collect(fa_page_t *page)
{
    if (!__atomic_load_n(&page->xfree, __ATOMIC_RELAXED))
        return;
    /* Acquire pairs with the release of the remote push: the block's next links are visible. */
    fa_block_t *list = __atomic_exchange_n(&page->xfree, NULL, __ATOMIC_ACQUIRE);
    if (!list)
        return;
    uint32_t count = 1;
    fa_block_t *tail = list;
    for (; tail->next; tail = tail->next)
        count++;
    tail->next = page->free;
    page->free = list;
    page->used -= count;
    page->frees += count;
    page->xcollected += count;
}

bool _fa_page_is_block(const fa_page_t *page, uintptr_t p)
{
    if (p < page->start)
        return false;
    /* Offsets within a segment fit in 32 bits, and a 32-bit division is much cheaper. */
    uint32_t offset = (uint32_t)(p - page->start);
    uint32_t index = offset / page->block_size;
    return index * page->block_size == offset &&
           index < __atomic_load_n(&page->capacity, __ATOMIC_RELAXED);
}

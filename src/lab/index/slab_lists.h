/* The free lists of simple segregated storage, the slab allocator's (Bonwick, USENIX 1994):
 * one LIFO list per size class for the free blocks of the slab pages of that class, one list of
 * free page runs, and the page table that says, for every page of the heap, which class it is
 * carved for (0: none, a run) and how many of its blocks are in use.
 *
 *   class c        blocks of FA_SLAB_CLASS_SIZE(c) bytes, header included, in pages of
 *                  FA_SLAB_PAGE bytes; the last block of a page also holds the page's rest
 *   runs           whole pages, free: emptied slab pages and freed large blocks
 *   pages[i]       (class + 1) << 16 | blocks in use, for the page at base + i * FA_SLAB_PAGE
 *
 * The structure lives in the heap's metadata after the heap, the page table after it
 * (classic_heap.c); the layout (carving pages, returning them) is heap/slab.c's.
 */
#ifndef FA_LAB_SLAB_LISTS_H
#define FA_LAB_SLAB_LISTS_H

#include <stddef.h>
#include <stdint.h>

#include "lab/index/block.h"
#include "lab/index/fit_list.h"

#define FA_SLAB_PAGE ((size_t)64 << 10)
#define FA_SLAB_CLASSES 30
/* The largest class: larger requests take runs of whole pages. */
#define FA_SLAB_MAX_CLASS 8192

struct fa_slab_lists {
    struct fa_lifo_list cls[FA_SLAB_CLASSES];
    struct fa_lifo_list runs;
    /* Per class, an emptied page kept carved (its index + 1; 0: none), so that a class whose
     * last block comes and goes does not carve and return a page every time. */
    size_t spare[FA_SLAB_CLASSES];
    uintptr_t base;  /* the heap's start: page i starts at base + i * FA_SLAB_PAGE */
    uint32_t *pages; /* the page table */
    size_t page_count;
};

/* Block size of class c: 48 to 128 by 16, then four classes per power of two up to 8 KiB. */
size_t _fa_slab_class_size(unsigned c);
/* The smallest class of at least `size` bytes (size <= FA_SLAB_MAX_CLASS). */
unsigned _fa_slab_class_of(size_t size);

void _fa_slab_lists_init(struct fa_slab_lists *s, uintptr_t base, uint32_t *pages,
                         size_t page_count);
/* A free block (its page's table entry says where it belongs) in or out of its list. */
void _fa_slab_lists_insert(struct fa_slab_lists *s, uintptr_t block);
void _fa_slab_lists_remove(struct fa_slab_lists *s, uintptr_t block);
/* A free block of class size `size`'s class, or a free run of at least `size` bytes (first
 * fit), or 0. */
uintptr_t _fa_slab_lists_find(const struct fa_slab_lists *s, size_t size);
void _fa_slab_lists_visit(const struct fa_slab_lists *s, void (*fn)(uintptr_t block, void *arg),
                          void *arg);
/* Links; each class list's blocks in pages of their class; runs on page boundaries, in pages of
 * no class, whole pages long; abort naming `heap`. */
void _fa_slab_lists_check(const struct fa_slab_lists *s, const void *heap);

static inline size_t fa_slab_page_of(const struct fa_slab_lists *s, uintptr_t block)
{
    return (block - s->base) / FA_SLAB_PAGE;
}

/* The class a page is carved for, +1 (0: none). */
static inline unsigned fa_slab_page_class(const struct fa_slab_lists *s, size_t page)
{
    return s->pages[page] >> 16;
}

static inline unsigned fa_slab_page_used(const struct fa_slab_lists *s, size_t page)
{
    return s->pages[page] & 0xFFFF;
}

#endif

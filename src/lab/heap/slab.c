/* Simple segregated storage, the slab allocator's layout (slab.h). */
#include "lab/heap/slab.h"

#include "common/assert.h"
#include "common/message.h"
#include "lab/heap/heap_blocks.h"
#include "platform/compiler.h"

static void set_page(struct fa_slab_lists *s, size_t page, unsigned cls, unsigned used)
{
    s->pages[page] = (uint32_t)cls << 16 | used;
}

size_t _fa_slab_size_for(size_t n)
{
    size_t size = fa_block_size_for(n);
    if (!size)
        return 0;
    if (size <= FA_SLAB_MAX_CLASS)
        return _fa_slab_class_size(_fa_slab_class_of(size));
    return fa_align_up(size, FA_SLAB_PAGE);
}

/* The block is a run of whole pages, not a slab page's block. */
static bool is_run(const struct fa_slab_lists *s, uintptr_t block)
{
    return !fa_slab_page_class(s, fa_slab_page_of(s, block));
}

/* A used block of whole pages becomes a free run. With coalescing on, it merges with the free
 * runs beside it: the page layer under the slabs keeps its runs whole, as Bonwick's vmem does;
 * the blocks of slab pages never merge. */
static void free_run(fa_classic_heap *h, uintptr_t run)
{
    struct fa_slab_lists *s = h->index.slab;
    size_t size = fa_block_size(run);
    if (h->cfg.coalesce) {
        uintptr_t next = run + size;
        if (next != h->brk && fa_block_is_free(next) && is_run(s, next)) {
            fa_heap_index_remove(h, next);
            size += fa_block_size(next);
            FA_HEAP_COUNT(h, coalesces, 1);
            FA_HEAP_COUNT(h, blocks, -1);
        }
        uintptr_t prev = run - (fa_block_prev_is_free(run) ? fa_block_prev_size(run) : 0);
        if (prev != run && is_run(s, prev)) {
            fa_heap_index_remove(h, prev);
            /* The header left inside the merged run still says "freed" (double frees). */
            fa_block_set_size(run, fa_block_size(run), true);
            fa_block_set_word1(run, FA_FREE_TAG);
            size += fa_block_size(prev);
            run = prev;
            FA_HEAP_COUNT(h, coalesces, 1);
            FA_HEAP_COUNT(h, blocks, -1);
        }
    }
    fa_heap_mark_free(run, size);
    fa_heap_index_insert(h, run);
    fa_heap_set_prev_free_of(h, run + size, true);
}

static void set_run_pages(struct fa_slab_lists *s, uintptr_t from, uintptr_t to)
{
    for (size_t page = fa_slab_page_of(s, from); page < fa_slab_page_of(s, to); page++)
        set_page(s, page, 0, 0);
}

/* A used run of `size` bytes past the break, its pages of no class: the last run extended when
 * it is free and `extend` allows, else a new one appended; 0 if the heap cannot grow. */
static uintptr_t grow(fa_classic_heap *h, size_t size, bool extend)
{
    struct fa_slab_lists *s = h->index.slab;
    uintptr_t old_brk = h->brk;
    /* The last block may be extended only if it is a run, not a class's pages. */
    bool last_run = h->last_free && is_run(s, old_brk - fa_block_prev_size(old_brk));
    uintptr_t run = _fa_heap_grow(h, size, extend && last_run);
    if (run) /* extended or appended, the new pages are those past the old break */
        set_run_pages(s, old_brk, h->brk);
    return run;
}

/* A used run of `size` bytes: `found` (a free run at least that long, or 0), the rest of it
 * put back as a free run; else past the break. */
static uintptr_t take_run(fa_classic_heap *h, uintptr_t found, size_t size)
{
    if (!found)
        return grow(h, size, true);
    fa_heap_take_free(h, found);
    size_t have = fa_block_size(found);
    if (have > size) {
        fa_block_set_size(found, size, false);
        fa_heap_write_header(found + size, have - size, false, false);
        FA_HEAP_COUNT(h, splits, 1);
        FA_HEAP_COUNT(h, blocks, 1);
        free_run(h, found + size);
    }
    return found;
}

/* A used run of one page becomes a slab page of class c: blocks of the class, all free and
 * listed so that the lowest-addressed comes first; the last also holds the page's rest. */
static void carve(fa_classic_heap *h, uintptr_t page, unsigned c)
{
    struct fa_slab_lists *s = h->index.slab;
    size_t size = _fa_slab_class_size(c), count = FA_SLAB_PAGE / size;
    bool page_prev_free = fa_block_prev_is_free(page);
    set_page(s, fa_slab_page_of(s, page), c + 1, 0);
    for (size_t i = count; i-- > 0;) {
        uintptr_t block = page + i * size;
        size_t block_size = i == count - 1 ? size + FA_SLAB_PAGE % size : size;
        fa_heap_write_header(block, block_size, false, i ? true : page_prev_free);
        fa_heap_mark_free(block, block_size);
        fa_heap_index_insert(h, block);
    }
    fa_heap_set_prev_free_of(h, page + FA_SLAB_PAGE, true);
    FA_HEAP_COUNT(h, blocks, count - 1);
}

uintptr_t _fa_slab_take(fa_classic_heap *h, size_t size)
{
    struct fa_slab_lists *s = h->index.slab;
    uintptr_t found = h->policy->find(&h->index, size);
    if (size > FA_SLAB_MAX_CLASS) {
        if (found)
            FA_HEAP_COUNT(h, reuses, 1);
        return take_run(h, found, size);
    }
    if (found) {
        FA_HEAP_COUNT(h, reuses, 1);
    } else {
        /* The class has no free block: a page for it, a free one if there is one. */
        uintptr_t page = take_run(h, _fa_slab_lists_find(s, FA_SLAB_PAGE), FA_SLAB_PAGE);
        if (!page)
            return 0;
        carve(h, page, _fa_slab_class_of(size));
        found = page;
    }
    fa_heap_take_free(h, found);
    size_t page = fa_slab_page_of(s, found);
    unsigned cls = fa_slab_page_class(s, page);
    set_page(s, page, cls, fa_slab_page_used(s, page) + 1);
    if (s->spare[cls - 1] == page + 1) /* in use again: no longer the spare */
        s->spare[cls - 1] = 0;
    return found;
}

uintptr_t _fa_slab_take_aligned_run(fa_classic_heap *h, size_t size, size_t alignment)
{
    /* The payload of a run at a multiple of the alignment from the start is aligned (the
     * origin, start + 16, is: slab.h): the pages before that place become a free run. */
    uintptr_t at = h->start + fa_align_up(h->brk - h->start, alignment);
    if (at > h->brk) {
        uintptr_t gap = grow(h, at - h->brk, false);
        if (!gap)
            return 0;
        free_run(h, gap);
    }
    return grow(h, size, false);
}

void _fa_slab_free(fa_classic_heap *h, uintptr_t block)
{
    struct fa_slab_lists *s = h->index.slab;
    size_t page = fa_slab_page_of(s, block);
    unsigned cls = fa_slab_page_class(s, page);
    if (!cls) { /* a large block: a free run now */
        free_run(h, block);
        return;
    }
    size_t size = fa_block_size(block);
    fa_heap_mark_free(block, size);
    fa_heap_index_insert(h, block);
    fa_heap_set_prev_free_of(h, block + size, true);
    unsigned used = fa_slab_page_used(s, page) - 1;
    set_page(s, page, cls, used);
    if (used)
        return;
    /* The page is empty. The class keeps one such page carved; another is returned. */
    if (!s->spare[cls - 1]) {
        s->spare[cls - 1] = page + 1;
        return;
    }
    /* Returned: its blocks leave their list for one free run.
     * Their headers still say "freed": freeing one again is reported as a double free. */
    uintptr_t start = s->base + page * FA_SLAB_PAGE, end = start + FA_SLAB_PAGE;
    uint64_t blocks = 0;
    for (uintptr_t b = start; b < end; b += fa_block_size(b), blocks++)
        fa_heap_index_remove(h, b);
    set_page(s, page, 0, 0);
    fa_heap_write_header(start, FA_SLAB_PAGE, false, fa_block_prev_is_free(start));
    FA_HEAP_COUNT(h, blocks, -(blocks - 1));
    free_run(h, start);
}

void _fa_slab_arena(fa_classic_heap *h)
{
    size_t arena = h->brk - h->start;
    FA_ASSERT(arena % FA_SLAB_PAGE == 0);
    fa_heap_write_header(h->start, arena, false, false);
    set_run_pages(h->index.slab, h->start, h->brk);
    FA_HEAP_COUNT(h, blocks, 1);
    FA_HEAP_COUNT(h, payload_grown, arena - FA_BLOCK_HEADER);
    free_run(h, h->start);
}

__attribute__((noreturn, cold)) static void broken(const fa_classic_heap *h, const char *what,
                                                   uintptr_t block)
{
    _fa_fatal("fitalloc: lab heap %p: slab layout broken: %s (block %p)\n", (const void *)h, what,
              (void *)block);
}

void _fa_slab_check(fa_classic_heap *h)
{
    const struct fa_slab_lists *s = h->index.slab;
    if (s->base != h->start || (h->brk - h->start) % FA_SLAB_PAGE)
        broken(h, "the heap is not whole pages from its start", h->brk);
    uintptr_t at = h->start;
    while (at < h->brk) {
        size_t page = fa_slab_page_of(s, at), size = fa_block_size(at);
        unsigned cls = fa_slab_page_class(s, page);
        if (page >= s->page_count)
            broken(h, "a page past the page table", at);
        if (!cls) { /* a run: whole pages, none of a class */
            if (!size || size % FA_SLAB_PAGE)
                broken(h, "a run that is not whole pages", at);
            for (size_t p = page; p < page + size / FA_SLAB_PAGE; p++)
                if (s->pages[p])
                    broken(h, "a run over a page of a class", at);
            at += size;
            continue;
        }
        size_t class_size = _fa_slab_class_size(cls - 1), count = FA_SLAB_PAGE / class_size;
        unsigned used = 0;
        for (size_t i = 0; i < count; i++) {
            uintptr_t block = at + i * class_size;
            size_t want = i == count - 1 ? class_size + FA_SLAB_PAGE % class_size : class_size;
            if (fa_block_size(block) != want)
                broken(h, "a block of another size in a slab page", block);
            used += !fa_block_is_free(block);
        }
        if (used != fa_slab_page_used(s, page))
            broken(h, "a slab page's count of blocks in use is wrong", at);
        if (!used && s->spare[cls - 1] != page + 1)
            broken(h, "an empty slab page neither returned nor its class's spare", at);
        at += FA_SLAB_PAGE;
    }
}

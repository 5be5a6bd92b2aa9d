/* The slab allocator's free lists and page table (slab_lists.h). */
#include "lab/index/slab_lists.h"

#include "common/assert.h"
#include "common/message.h"

static const uint16_t class_sizes[FA_SLAB_CLASSES] = {
    48,  64,  80,   96,   112,  128,  160,  192,  224,  256,  320,  384,  448,  512,  640,
    768, 896, 1024, 1280, 1536, 1792, 2048, 2560, 3072, 3584, 4096, 5120, 6144, 7168, 8192};

_Static_assert(FA_SLAB_PAGE / FA_SLAB_MAX_CLASS >= 8, "a page holds several blocks of a class");
_Static_assert(FA_SLAB_PAGE / 48 < 0x10000, "a page's count of used blocks fits 16 bits");

size_t _fa_slab_class_size(unsigned c)
{
    FA_ASSERT(c < FA_SLAB_CLASSES);
    return class_sizes[c];
}

unsigned _fa_slab_class_of(size_t size)
{
    FA_ASSERT(size <= FA_SLAB_MAX_CLASS);
    unsigned lo = 0, hi = FA_SLAB_CLASSES - 1;
    while (lo < hi) { /* the first class of at least `size` */
        unsigned mid = (lo + hi) / 2;
        if (class_sizes[mid] < size)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void _fa_slab_lists_init(struct fa_slab_lists *s, uintptr_t base, uint32_t *pages,
                         size_t page_count)
{
    for (unsigned c = 0; c < FA_SLAB_CLASSES; c++)
        s->cls[c] = (struct fa_lifo_list){NULL, 0};
    s->runs = (struct fa_lifo_list){NULL, 0};
    for (unsigned c = 0; c < FA_SLAB_CLASSES; c++)
        s->spare[c] = 0;
    s->base = base;
    s->pages = pages;
    s->page_count = page_count;
}

static struct fa_lifo_list *list_of(struct fa_slab_lists *s, uintptr_t block)
{
    unsigned cls = fa_slab_page_class(s, fa_slab_page_of(s, block));
    return cls ? &s->cls[cls - 1] : &s->runs;
}

void _fa_slab_lists_insert(struct fa_slab_lists *s, uintptr_t block)
{
    _fa_lifo_push(list_of(s, block), block);
}

void _fa_slab_lists_remove(struct fa_slab_lists *s, uintptr_t block)
{
    _fa_lifo_remove(list_of(s, block), block);
}

uintptr_t _fa_slab_lists_find(const struct fa_slab_lists *s, size_t size)
{
    if (size <= FA_SLAB_MAX_CLASS)
        return _fa_lifo_first(&s->cls[_fa_slab_class_of(size)]);
    for (uintptr_t b = _fa_lifo_first(&s->runs); b; b = fa_list_next(b))
        if (fa_block_size(b) >= size)
            return b;
    return 0;
}

void _fa_slab_lists_visit(const struct fa_slab_lists *s, void (*fn)(uintptr_t block, void *arg),
                          void *arg)
{
    for (unsigned c = 0; c < FA_SLAB_CLASSES; c++)
        for (uintptr_t b = _fa_lifo_first(&s->cls[c]); b; b = fa_list_next(b))
            fn(b, arg);
    for (uintptr_t b = _fa_lifo_first(&s->runs); b; b = fa_list_next(b))
        fn(b, arg);
}

__attribute__((noreturn, cold)) static void broken(const void *heap, const char *what,
                                                   uintptr_t block)
{
    _fa_fatal("fitalloc: lab heap %p: slab lists: %s (block %p)\n", heap, what, (void *)block);
}

void _fa_slab_lists_check(const struct fa_slab_lists *s, const void *heap)
{
    for (unsigned c = 0; c < FA_SLAB_CLASSES; c++) {
        _fa_lifo_check(&s->cls[c], heap, 0);
        size_t size = class_sizes[c];
        for (uintptr_t b = _fa_lifo_first(&s->cls[c]); b; b = fa_list_next(b)) {
            size_t page = fa_slab_page_of(s, b), have = fa_block_size(b);
            if (page >= s->page_count || fa_slab_page_class(s, page) != c + 1)
                broken(heap, "class block in a page of another class", b);
            /* The page's last block also holds its rest (less than a block). */
            uintptr_t end = s->base + (page + 1) * FA_SLAB_PAGE;
            if (have != size && !(b + have == end && have < 2 * size))
                broken(heap, "class block of another size", b);
        }
    }
    _fa_lifo_check(&s->runs, heap, 0);
    for (uintptr_t b = _fa_lifo_first(&s->runs); b; b = fa_list_next(b)) {
        size_t page = fa_slab_page_of(s, b);
        if ((b - s->base) % FA_SLAB_PAGE || fa_block_size(b) % FA_SLAB_PAGE ||
            page >= s->page_count || fa_slab_page_class(s, page))
            broken(heap, "free run not whole pages of no class", b);
    }
}

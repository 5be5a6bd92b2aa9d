/* The buddy system's free lists (buddy_lists.h). */
#include "lab/index/buddy_lists.h"

#include <string.h>

#include "common/assert.h"
#include "common/message.h"

void _fa_buddy_lists_init(struct fa_buddy_lists *b)
{
    memset(b, 0, sizeof *b);
}

void _fa_buddy_lists_insert(struct fa_buddy_lists *b, uintptr_t block)
{
    size_t size = fa_block_size(block);
    FA_ASSERT((size & (size - 1)) == 0 && fa_buddy_order(size) >= FA_BUDDY_MIN_ORDER);
    unsigned k = fa_buddy_order(size);
    _fa_lifo_push(&b->order[k], block);
    b->bitmap |= (uint64_t)1 << k;
    b->count++;
}

void _fa_buddy_lists_remove(struct fa_buddy_lists *b, uintptr_t block, size_t size)
{
    unsigned k = fa_buddy_order(size);
    FA_ASSERT(b->order[k].count > 0);
    _fa_lifo_remove(&b->order[k], block);
    if (!b->order[k].head)
        b->bitmap &= ~((uint64_t)1 << k);
    b->count--;
}

uintptr_t _fa_buddy_lists_find(const struct fa_buddy_lists *b, size_t size)
{
    FA_ASSERT((size & (size - 1)) == 0);
    uint64_t orders = b->bitmap & (~(uint64_t)0 << fa_buddy_order(size));
    return orders ? _fa_lifo_first(&b->order[__builtin_ctzll(orders)]) : 0;
}

size_t _fa_buddy_lists_largest(const struct fa_buddy_lists *b)
{
    return b->bitmap ? (size_t)1 << (63 - __builtin_clzll(b->bitmap)) : 0;
}

void _fa_buddy_lists_visit(const struct fa_buddy_lists *b, void (*fn)(uintptr_t block, void *arg),
                           void *arg)
{
    for (unsigned k = FA_BUDDY_MIN_ORDER; k <= FA_BUDDY_MAX_ORDER; k++)
        for (uintptr_t block = _fa_lifo_first(&b->order[k]); block; block = fa_list_next(block))
            fn(block, arg);
}

void _fa_buddy_lists_check(const struct fa_buddy_lists *b, const void *heap)
{
    size_t count = 0;
    for (unsigned k = 0; k <= FA_BUDDY_MAX_ORDER; k++) {
        const struct fa_lifo_list *l = &b->order[k];
        if (k < FA_BUDDY_MIN_ORDER && l->head)
            _fa_fatal("fitalloc: lab heap %p: buddy lists: order %u below the smallest\n", heap, k);
        _fa_lifo_check(l, heap, (size_t)1 << k);
        if (!(b->bitmap >> k & 1) != !l->head)
            _fa_fatal("fitalloc: lab heap %p: buddy lists: bit %u disagrees with its list\n", heap,
                      k);
        count += l->count;
    }
    if (b->bitmap >> (FA_BUDDY_MAX_ORDER + 1))
        _fa_fatal("fitalloc: lab heap %p: buddy lists: bit past the last order\n", heap);
    if (count != b->count)
        _fa_fatal("fitalloc: lab heap %p: buddy lists: count disagrees with the lists\n", heap);
}

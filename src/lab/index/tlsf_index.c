/* The TLSF index (tlsf_index.h): two bitmaps over an array of LIFO lists. */
#include "lab/index/tlsf_index.h"

#include <string.h>

#include "common/assert.h"
#include "common/message.h"

static unsigned highest_bit(uint64_t x)
{
    return 63u - (unsigned)__builtin_clzll(x);
}

void _fa_tlsf_mapping(size_t size, unsigned *fl, unsigned *sl)
{
    FA_ASSERT(size >= FA_BLOCK_MIN && size % FA_BLOCK_ALIGN == 0);
    if (size < FA_TLSF_LINEAR) {
        *fl = 0;
        *sl = (unsigned)(size / FA_BLOCK_ALIGN);
        return;
    }
    unsigned msb = highest_bit(size);
    *fl = msb - FA_TLSF_LINEAR_LOG2 + 1;
    /* The FA_TLSF_SL_LOG2 bits below the highest one name the subrange; dropping the highest
     * bit (the xor) leaves 0 .. SL_COUNT - 1. */
    *sl = (unsigned)(size >> (msb - FA_TLSF_SL_LOG2)) ^ FA_TLSF_SL_COUNT;
}

/* The list whose every block fits `size`: round the size up to the start of the next
 * subrange (sizes in first level 0 are exact already), then map it. */
static void mapping_search(size_t size, unsigned *fl, unsigned *sl)
{
    if (size >= FA_TLSF_LINEAR)
        size += ((size_t)1 << (highest_bit(size) - FA_TLSF_SL_LOG2)) - 1;
    /* The rounded size need not be a multiple of 16; mapping only reads its high bits. */
    size &= ~(size_t)(FA_BLOCK_ALIGN - 1);
    _fa_tlsf_mapping(size, fl, sl);
}

void _fa_tlsf_init(struct fa_tlsf *t)
{
    memset(t, 0, sizeof *t);
}

void _fa_tlsf_insert(struct fa_tlsf *t, uintptr_t block)
{
    unsigned fl, sl;
    _fa_tlsf_mapping(fa_block_size(block), &fl, &sl);
    FA_ASSERT(fl < FA_TLSF_FL_COUNT);
    _fa_lifo_push(&t->lists[fl][sl], block);
    t->sl_bitmap[fl] |= 1u << sl;
    t->fl_bitmap |= (uint64_t)1 << fl;
    t->count++;
    t->steps++;
}

void _fa_tlsf_remove(struct fa_tlsf *t, uintptr_t block, size_t size)
{
    unsigned fl, sl;
    _fa_tlsf_mapping(size, &fl, &sl);
    struct fa_lifo_list *l = &t->lists[fl][sl];
    FA_ASSERT(l->count > 0);
    _fa_lifo_remove(l, block);
    if (!l->head) {
        t->sl_bitmap[fl] &= ~(1u << sl);
        if (!t->sl_bitmap[fl])
            t->fl_bitmap &= ~((uint64_t)1 << fl);
    }
    t->count--;
    t->steps++;
}

uintptr_t _fa_tlsf_find(struct fa_tlsf *t, size_t size)
{
    unsigned fl, sl;
    mapping_search(size, &fl, &sl);
    if (fl >= FA_TLSF_FL_COUNT)
        return 0;
    /* Lists of this first level from subrange sl up, else the next non-empty first level (any
     * of its blocks is larger than the whole range of fl). */
    uint32_t sl_map = t->sl_bitmap[fl] & (~0u << sl);
    t->steps++;
    if (!sl_map) {
        uint64_t fl_map = t->fl_bitmap & (~(uint64_t)0 << fl << 1);
        t->steps++;
        if (!fl_map)
            return 0;
        fl = (unsigned)__builtin_ctzll(fl_map);
        sl_map = t->sl_bitmap[fl];
    }
    sl = (unsigned)__builtin_ctz(sl_map);
    return _fa_lifo_first(&t->lists[fl][sl]);
}

size_t _fa_tlsf_largest(const struct fa_tlsf *t)
{
    if (!t->fl_bitmap)
        return 0;
    unsigned fl = highest_bit(t->fl_bitmap);
    unsigned sl = highest_bit(t->sl_bitmap[fl]);
    size_t largest = 0;
    for (uintptr_t b = _fa_lifo_first(&t->lists[fl][sl]); b; b = fa_list_next(b))
        if (fa_block_size(b) > largest)
            largest = fa_block_size(b);
    return largest;
}

void _fa_tlsf_visit(const struct fa_tlsf *t, void (*fn)(uintptr_t block, void *arg), void *arg)
{
    for (unsigned fl = 0; fl < FA_TLSF_FL_COUNT; fl++)
        for (unsigned sl = 0; sl < FA_TLSF_SL_COUNT; sl++)
            for (uintptr_t b = _fa_lifo_first(&t->lists[fl][sl]); b; b = fa_list_next(b))
                fn(b, arg);
}

__attribute__((noreturn, cold)) static void broken(const void *heap, const char *what, unsigned fl,
                                                   unsigned sl)
{
    _fa_fatal("fitalloc: lab heap %p: TLSF index: %s (list %u,%u)\n", heap, what, fl, sl);
}

void _fa_tlsf_check(const struct fa_tlsf *t, const void *heap)
{
    size_t count = 0;
    for (unsigned fl = 0; fl < FA_TLSF_FL_COUNT; fl++) {
        for (unsigned sl = 0; sl < FA_TLSF_SL_COUNT; sl++) {
            const struct fa_lifo_list *l = &t->lists[fl][sl];
            _fa_lifo_check(l, heap, 0);
            if (!(t->sl_bitmap[fl] >> sl & 1) != !l->head)
                broken(heap, "second-level bit disagrees with its list", fl, sl);
            for (uintptr_t b = _fa_lifo_first(l); b; b = fa_list_next(b)) {
                unsigned bfl, bsl;
                _fa_tlsf_mapping(fa_block_size(b), &bfl, &bsl);
                if (bfl != fl || bsl != sl)
                    broken(heap, "block in the list of another size", fl, sl);
            }
            count += l->count;
        }
        if (!(t->fl_bitmap >> fl & 1) != !t->sl_bitmap[fl])
            broken(heap, "first-level bit disagrees with the second level", fl, 0);
    }
    if (t->fl_bitmap >> FA_TLSF_FL_COUNT)
        broken(heap, "first-level bit past the last list", FA_TLSF_FL_COUNT, 0);
    if (count != t->count)
        broken(heap, "count disagrees with the lists", 0, 0);
}

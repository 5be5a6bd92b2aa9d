/* ctest labels: unit */
/* The one-multiplication block test of the free path (src/engine/free_list.h) must accept exactly
 * the starts of the first `capacity` blocks of a page and nothing else: every offset around
 * and inside a page (negative ones too, as for pointers into a segment's header), for every
 * size class and several capacities, and block starts made non-canonical by high bits. */
#include <stdint.h>
#include <stdio.h>

#include "engine/free_list.h"
#include "engine/size_class.h"
#include "check.h"

static void check_class(size_t bin)
{
    uint64_t d = fa_bin_size(bin);
    size_t page_size = (size_t)1 << (fa_bin_kind(bin) == FA_SEG_SMALL ? FA_SMALL_PAGE_SHIFT
                                                                      : FA_MEDIUM_PAGE_SHIFT);
    uint64_t reserved = page_size / d;
    fa_page_t page = {0};
    page.start = (uintptr_t)0x7f1234400000 + FA_MEDIUM_FIRST_PAGE;
    page.magic = _fa_block_magic(d);
    CHECK(page.magic & 1);
    uint64_t capacities[] = {1, reserved / 2 ? reserved / 2 : 1, reserved};
    for (size_t c = 0; c < 3; c++) {
        uint64_t capacity = capacities[c];
        page.limit = capacity * (page.magic * d);
        int64_t from = -(int64_t)FA_MEDIUM_FIRST_PAGE, to = (int64_t)page_size + (int64_t)d;
        /* Every byte near the ends and the first blocks, every 16th byte elsewhere. */
        for (int64_t n = from; n < to; n += (n > -64 && n < (int64_t)(4 * d)) ? 1 : 16) {
            bool want = n >= 0 && n % (int64_t)d == 0 && (uint64_t)n / d < capacity;
            bool got = fa_page_has_block(&page, page.start + (uintptr_t)n);
            CHECK_MSG(got == want, "class %zu (%llu B), capacity %llu, offset %lld: got %d", bin,
                      (unsigned long long)d, (unsigned long long)capacity, (long long)n, got);
        }
        for (uint64_t i = capacity > 2 ? capacity - 2 : 0; i < capacity + 2; i++)
            for (int64_t r = -16; r <= 16; r++) {
                int64_t n = (int64_t)(i * d) + r;
                bool want = n >= 0 && n % (int64_t)d == 0 && (uint64_t)n / d < capacity;
                CHECK_EQ(fa_page_has_block(&page, page.start + (uintptr_t)n), want);
            }
        /* Block starts made non-canonical by any of the 17 bits above the 47-bit space. (An
         * interior address made non-canonical may pass: it faults at the first access.) */
        for (unsigned bit = FA_ADDRESS_BITS; bit < 64; bit++)
            for (uint64_t i = 0; i < capacity; i += 1 + capacity / 64) {
                uintptr_t p = page.start + i * d;
                CHECK_MSG(!fa_page_has_block(&page, p ^ ((uintptr_t)1 << bit)),
                          "class %zu, bit %u, block %llu", bin, bit, (unsigned long long)i);
            }
    }
}

int main(void)
{
    for (size_t bin = 0; bin < FA_BINS; bin++)
        check_class(bin);
    printf("engine/block_check: ok (%d classes)\n", FA_BINS);
    return 0;
}

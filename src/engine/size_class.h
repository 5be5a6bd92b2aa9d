/* Size classes: 16-byte steps up to 128 bytes, then 8 classes per doubling up to FA_MEDIUM_MAX,
 * so a request wastes at most 12.5 %; between 64 and 128 bytes the 16-byte alignment every
 * block keeps makes the step 16 (at most 15 bytes). The big classes above FA_MEDIUM_MAX, up to
 * FA_CLASS_MAX, come 4 per doubling (at most 25 %): fewer of them keep more blocks of each in
 * a page. */
#ifndef FA_SIZE_CLASS_H
#define FA_SIZE_CLASS_H

#include <stddef.h>

#include "engine/types.h"

/* The class for n bytes (n <= FA_CLASS_MAX); malloc(0) uses the 16-byte class. */
static inline size_t fa_bin_of(size_t n)
{
    if (n <= 128)
        return n ? (n - 1) >> 4 : 0;
    size_t w = n - 1;
    /* b = index of the highest set bit (>= 7); the 3 bits below it pick one of 8 steps (big
     * classes: the 2 bits below it, one of 4). */
    unsigned b = 63u - (unsigned)__builtin_clzl(w);
    if (n <= FA_MEDIUM_MAX)
        return 8 + (b - 7) * 8 + ((w >> (b - 3)) & 7);
    return FA_MEDIUM_BINS + (b - 17) * 4 + ((w >> (b - 2)) & 3);
}

/* Block size of a class: the largest request it serves. */
static inline size_t fa_bin_size(size_t bin)
{
    if (bin < 8)
        return 16 * (bin + 1);
    if (bin >= FA_MEDIUM_BINS) {
        size_t b = 17 + (bin - FA_MEDIUM_BINS) / 4, k = (bin - FA_MEDIUM_BINS) % 4;
        return ((size_t)1 << b) + (k + 1) * ((size_t)1 << (b - 2));
    }
    size_t b = 7 + (bin - 8) / 8, k = (bin - 8) % 8;
    return ((size_t)1 << b) + (k + 1) * ((size_t)1 << (b - 3));
}

_Static_assert(FA_MEDIUM_MAX == (size_t)1 << 17, "big classes start at 2^17");
_Static_assert(FA_BINS == FA_MEDIUM_BINS + 8, "big classes: 4 per doubling, 2^17 to 2^19");
_Static_assert(FA_CLASS_MAX == (size_t)1 << 19, "the last big class is 2^19");

#endif

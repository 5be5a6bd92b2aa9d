/* Size classes: 16-byte steps up to 128 bytes, then 8 classes per doubling, so a request above
 * 128 bytes wastes at most 12.5 %; between 64 and 128 bytes the 16-byte alignment every block
 * keeps makes the step 16 (at most 15 bytes). Classes end at FA_MEDIUM_MAX. */
#ifndef FA_SIZE_CLASS_H
#define FA_SIZE_CLASS_H

#include <stddef.h>

#include "types.h"

/* The class for n bytes (n <= FA_MEDIUM_MAX); malloc(0) uses the 16-byte class. */
static inline size_t fa_bin_of(size_t n)
{
    if (n <= 128)
        return n ? (n - 1) >> 4 : 0;
    size_t w = n - 1;
    /* b = index of the highest set bit (>= 7); the 3 bits below it pick one of 8 steps. */
    unsigned b = 63u - (unsigned)__builtin_clzl(w);
    return 8 + (b - 7) * 8 + ((w >> (b - 3)) & 7);
}

/* Block size of a class: the largest request it serves. */
static inline size_t fa_bin_size(size_t bin)
{
    if (bin < 8)
        return 16 * (bin + 1);
    size_t b = 7 + (bin - 8) / 8, k = (bin - 8) % 8;
    return ((size_t)1 << b) + (k + 1) * ((size_t)1 << (b - 3));
}

#endif

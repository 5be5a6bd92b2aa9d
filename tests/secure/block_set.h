/* The blocks a secure test allocated, as an array: whether an address is one of them, and the
 * class's slot size (the smallest distance between two of them; blocks of two pages lie farther
 * apart). Header-only, like tests/common. */
#ifndef FITALLOC_TESTS_SECURE_BLOCK_SET_H
#define FITALLOC_TESTS_SECURE_BLOCK_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline bool fa_test_in_blocks(char *const *blocks, size_t count, const char *p)
{
    for (size_t i = 0; i < count; i++)
        if (blocks[i] == p)
            return true;
    return false;
}

/* SIZE_MAX when fewer than two blocks */
static inline size_t fa_test_slot_size(char *const *blocks, size_t count)
{
    size_t d = SIZE_MAX;
    for (size_t i = 0; i < count; i++)
        for (size_t j = 0; j < count; j++)
            if (blocks[j] > blocks[i] && (size_t)(blocks[j] - blocks[i]) < d)
                d = (size_t)(blocks[j] - blocks[i]);
    return d;
}

#endif

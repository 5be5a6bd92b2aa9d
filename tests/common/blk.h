/* A block a test holds: its memory, its size and the id its bytes are filled from, checked
 * before it is freed (check.h's pattern). Header-only, like check.h. */
#ifndef FITALLOC_TESTS_BLK_H
#define FITALLOC_TESTS_BLK_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "check.h"
#include "fitalloc.h"

typedef struct {
    unsigned char *p;
    size_t n;
    uint64_t id;
} blk;

/* Ids unique in the process, whichever thread takes them. */
static atomic_uint_fast64_t fa_blk_next_id = 1;

/* b->p holds n fresh bytes: give it an id and fill them from it. */
static inline void blk_fill(blk *b, size_t n)
{
    CHECK_MSG(b->p != NULL, "allocation of %zu bytes failed", n);
    b->n = n;
    b->id = atomic_fetch_add(&fa_blk_next_id, 1);
    fa_pattern_fill(b->p, n, b->id);
}

/* Check the block's bytes, then free it. */
static inline void blk_del(blk *b)
{
    CHECK_PATTERN(b->p, b->n, b->id);
    fa_free(b->p);
    b->p = NULL;
}

#endif

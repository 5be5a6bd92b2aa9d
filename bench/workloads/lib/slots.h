/* The slot table of the single-thread replacement shapes (churn, churn-wide, buffers, large): a
 * fixed number of live blocks, each replaced at random by a new one, whose tags are checked
 * before it is freed. */
#ifndef BENCH_SLOTS_H
#define BENCH_SLOTS_H

#include <stdint.h>
#include <stdlib.h>

#include "pattern.h"

struct slot {
    unsigned char *p;
    size_t n;
    uint64_t tag;
};

/* Checks a block's tags (aborting on a bad one); a value folded into the run's checksum. */
typedef uint64_t (*slot_check_fn)(const unsigned char *p, size_t n, uint64_t tag);

/* Check and free the slot's block, if it has one; the check's value, else 0. */
static inline uint64_t slot_release(struct slot *sl, slot_check_fn check)
{
    if (!sl->p)
        return 0;
    uint64_t value = check(sl->p, sl->n, sl->tag);
    free(sl->p);
    sl->p = NULL;
    return value;
}

/* Release every slot, in order; the sum of the checks. */
static inline uint64_t slots_release_all(struct slot *slots, size_t count, slot_check_fn check)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < count; i++)
        sum += slot_release(&slots[i], check);
    return sum;
}

/* p, the result of `call` for n bytes, into the slot with its tag (expect_block checks it). */
static inline unsigned char *slot_fill(struct slot *sl, void *p, const char *call, size_t n,
                                       uintptr_t align, uint64_t tag)
{
    sl->p = expect_block(p, call, n, align);
    sl->n = n;
    sl->tag = tag;
    return p;
}

#endif

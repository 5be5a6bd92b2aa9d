/* What the lab's unit tests share: a bare classic heap or a lab made from a few settings, and
 * checked to exist. Header-only, like tests/common. */
#ifndef FITALLOC_TESTS_LAB_TEST_H
#define FITALLOC_TESTS_LAB_TEST_H

#include <stdbool.h>
#include <stddef.h>

#include "lab/heap/classic_heap.h"
#include "lab/threads/lab_instance.h"
#include "check.h"

/* A classic heap under this policy and index, reserving `reserve` bytes of address space;
 * exact-size lists up to 128 B under segregated fit. */
static inline fa_classic_heap *lab_test_heap(enum fa_policy policy, enum fa_lab_index index,
                                             bool coalesce, size_t reserve)
{
    struct fa_classic_heap_config cfg = {
        .policy = policy, .index = index, .coalesce = coalesce, .arena = 0, .exact_max = 128};
    fa_classic_heap *h = _fa_classic_heap_create(&cfg, reserve);
    CHECK(h != NULL);
    return h;
}

static inline struct fa_lab *lab_test_lab(const struct fa_lab_config *cfg)
{
    struct fa_lab *lab = _fa_lab_instance_create(cfg);
    CHECK(lab != NULL);
    return lab;
}

#endif

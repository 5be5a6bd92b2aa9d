/* Do any two live blocks overlap? Blocks are half-open intervals [start, start + bytes): two
 * blocks that merely touch do not overlap (the ECE650 kits count them as overlapping, which fails
 * correct allocators without headers; workloads.md §0.4).
 * Sorting by start and comparing each block with the furthest end seen so far finds an overlap
 * iff one exists, in O(n log n) instead of the kits' O(n^2) pair test. */
#ifndef BENCH_OVERLAP_H
#define BENCH_OVERLAP_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct region {
    uintptr_t start;
    size_t bytes;
    long idx; /* the caller's index, for the message */
};

static inline int region_cmp(const void *a, const void *b)
{
    const struct region *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* 0 when no two of the n regions overlap; else prints the kits' failure lines and returns 1.
 * Sorts r in place. */
static inline int regions_overlap(struct region *r, size_t n)
{
    qsort(r, n, sizeof *r, region_cmp);
    size_t furthest = 0; /* index of the region that ends furthest right so far */
    for (size_t i = 1; i < n; i++) {
        const struct region *a = &r[furthest], *b = &r[i];
        if (b->start < a->start + a->bytes) {
            printf("Found 2 overlapping allocated regions.\n");
            for (int k = 0; k < 2; k++) {
                const struct region *x = k ? b : a;
                printf("Region %d bounds: start=%#lx, end=%#lx, size=%zuB, idx=%ld\n", k + 1,
                       (unsigned long)x->start, (unsigned long)(x->start + x->bytes), x->bytes,
                       x->idx);
            }
            return 1;
        }
        if (b->start + b->bytes > a->start + a->bytes)
            furthest = i;
    }
    return 0;
}

#endif

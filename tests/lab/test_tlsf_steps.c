/* TLSF's malloc and free take a bounded number of index steps, whatever the number of free
 * blocks; best fit over its size tree takes more as the tree grows (O(log n)). The steps are
 * the index's own count (tlsf_index.h, fit_tree.h): for TLSF a bitmap search or a list change,
 * for the tree a node visited or a rebalancing round.
 *
 * The adversarial sequences, on a heap of n free blocks of 97 sizes kept apart by used
 * 1-byte blocks:
 *   - requests of every size up to 4000 bytes, each freed at once: lists that are empty send
 *     TLSF's search to the next first level, requests larger than every block miss (and grow
 *     the heap), the rest of a split block merges back on free;
 *   - the 1-byte blocks freed between two free blocks: three-way merges.
 * TLSF's bound, from the code: a malloc is a search (two bitmap steps at most), the chosen
 * block's removal and the inserted rest of its split: 4; a free removes its free neighbours
 * and inserts the merged block, which moves list when it grows: at most 4 as well. */
#include <stdio.h>

#include "lab/heap/classic_heap.h"
#include "check.h"

#define TLSF_BOUND 4

struct worst {
    uint64_t malloc, free;
};

static void *measured_alloc(fa_classic_heap *h, size_t n, struct worst *w)
{
    uint64_t before = _fa_index_steps(&h->index);
    void *p = _fa_classic_heap_alloc(h, n);
    CHECK(p != NULL);
    uint64_t steps = _fa_index_steps(&h->index) - before;
    if (steps > w->malloc)
        w->malloc = steps;
    return p;
}

static void measured_free(fa_classic_heap *h, void *p, struct worst *w)
{
    uint64_t before = _fa_index_steps(&h->index);
    _fa_classic_heap_free(h, p, "free");
    uint64_t steps = _fa_index_steps(&h->index) - before;
    if (steps > w->free)
        w->free = steps;
}

static struct worst adversarial(enum fa_policy policy, size_t n)
{
    struct fa_classic_heap_config cfg = {.policy = policy, .coalesce = true};
    fa_classic_heap *h = _fa_classic_heap_create(&cfg, (size_t)1 << 30);
    CHECK(h != NULL);
    void **hole = calloc(n, sizeof *hole), **separator = calloc(n, sizeof *separator);
    CHECK(hole && separator);
    for (size_t i = 0; i < n; i++) {
        hole[i] = _fa_classic_heap_alloc(h, 32 + 16 * (i * 7 % 97));
        separator[i] = _fa_classic_heap_alloc(h, 1);
        CHECK(hole[i] && separator[i]);
    }
    for (size_t i = 0; i < n; i++)
        _fa_classic_heap_free(h, hole[i], "free");
    CHECK_EQ(h->count.free_blocks, n);

    struct worst w = {0, 0};
    for (size_t size = 1; size <= 4000; size += 3)
        measured_free(h, measured_alloc(h, size, &w), &w);
    for (size_t i = 0; i + 1 < n; i += n / 100)
        measured_free(h, separator[i], &w);
    _fa_classic_heap_check(h);
    free(hole);
    free(separator);
    _fa_classic_heap_destroy(h);
    return w;
}

int main(void)
{
    size_t small = 1000, large = 32000;
    struct worst tlsf_small = adversarial(FA_POLICY_TLSF, small);
    struct worst tlsf_large = adversarial(FA_POLICY_TLSF, large);
    struct worst best_small = adversarial(FA_POLICY_BEST, small);
    struct worst best_large = adversarial(FA_POLICY_BEST, large);
    printf("worst index steps of a malloc / a free:\n"
           "  %zu free blocks: tlsf %llu / %llu, best fit (size tree) %llu / %llu\n"
           "  %zu free blocks: tlsf %llu / %llu, best fit (size tree) %llu / %llu\n",
           small, (unsigned long long)tlsf_small.malloc, (unsigned long long)tlsf_small.free,
           (unsigned long long)best_small.malloc, (unsigned long long)best_small.free, large,
           (unsigned long long)tlsf_large.malloc, (unsigned long long)tlsf_large.free,
           (unsigned long long)best_large.malloc, (unsigned long long)best_large.free);
    /* O(1): the same bound at both sizes. */
    CHECK_LE(tlsf_small.malloc, TLSF_BOUND);
    CHECK_LE(tlsf_small.free, TLSF_BOUND);
    CHECK_LE(tlsf_large.malloc, TLSF_BOUND);
    CHECK_LE(tlsf_large.free, TLSF_BOUND);
    /* The counting sees the tree's cost, which grows with the number of free blocks. */
    CHECK_GT(best_large.malloc, best_small.malloc);
    CHECK_GT(best_small.malloc, TLSF_BOUND);
    printf("lab/tlsf_steps: ok\n");
    return 0;
}

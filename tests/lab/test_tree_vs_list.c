/* The two indexes must be two implementations of one policy: on long random sequences a heap
 * indexed by trees and a heap indexed by the textbook list choose the same block every time
 * (the same offset from the heap start), for every policy, with and without coalescing. */
#include <stdint.h>
#include <string.h>

#include "lab/heap/classic_heap.h"
#include "check.h"

#define LIVE 400

static const char *const policy_name[] = {"first",      "next", "best",  "worst",
                                          "segregated", "tlsf", "buddy", "slab"};

static size_t offset(const fa_classic_heap *h, const void *p)
{
    return p ? (size_t)((uintptr_t)p - h->start) : (size_t)-1;
}

static void compare(enum fa_policy policy, bool coalesce, bool arena, uint64_t seed, unsigned ops)
{
    struct fa_classic_heap_config cfg = {.policy = policy,
                                         .coalesce = coalesce,
                                         .arena = arena ? (size_t)1 << 20 : 0,
                                         .exact_max = 128};
    cfg.index = FA_LAB_INDEX_TREE;
    fa_classic_heap *tree = _fa_classic_heap_create(&cfg, (size_t)512 << 20);
    cfg.index = FA_LAB_INDEX_LIST;
    fa_classic_heap *list = _fa_classic_heap_create(&cfg, (size_t)512 << 20);
    CHECK(tree && list);
    static void *pt[LIVE], *pl[LIVE];
    memset(pt, 0, sizeof pt);
    memset(pl, 0, sizeof pl);
    fa_rng rng;
    fa_rng_seed(&rng, seed);
    for (unsigned op = 0; op < ops; op++) {
        unsigned i = (unsigned)fa_rng_below(&rng, LIVE);
        unsigned what = (unsigned)fa_rng_below(&rng, 16);
        /* Sizes cluster so that ties and exact fits happen often. */
        size_t n = what < 8 ? 16 * (1 + fa_rng_below(&rng, 12)) : 1 + fa_rng_below(&rng, 3000);
        if (!pt[i]) {
            if (what == 0) {
                size_t align = (size_t)32 << fa_rng_below(&rng, 6);
                pt[i] = _fa_classic_heap_alloc_aligned(tree, align, n);
                pl[i] = _fa_classic_heap_alloc_aligned(list, align, n);
            } else {
                pt[i] = _fa_classic_heap_alloc(tree, n);
                pl[i] = _fa_classic_heap_alloc(list, n);
            }
            CHECK_MSG(offset(tree, pt[i]) == offset(list, pl[i]),
                      "%s (coalesce %d, arena %d) op %u: tree chose offset %zu, list %zu",
                      policy_name[policy], coalesce, arena, op, offset(tree, pt[i]),
                      offset(list, pl[i]));
        } else if (what < 3) {
            bool rt = _fa_classic_heap_resize(tree, pt[i], n);
            bool rl = _fa_classic_heap_resize(list, pl[i], n);
            CHECK_EQ(rt, rl);
        } else {
            _fa_classic_heap_free(tree, pt[i], "free");
            _fa_classic_heap_free(list, pl[i], "free");
            pt[i] = pl[i] = NULL;
        }
        if (op % 64 == 0) {
            _fa_classic_heap_check(tree);
            _fa_classic_heap_check(list);
        }
    }
    _fa_classic_heap_check(tree);
    _fa_classic_heap_check(list);
    CHECK(memcmp(&tree->count, &list->count, sizeof tree->count) == 0);
    CHECK_EQ(_fa_classic_heap_largest_free(tree), _fa_classic_heap_largest_free(list));
    _fa_classic_heap_destroy(tree);
    _fa_classic_heap_destroy(list);
}

int main(void)
{
    unsigned ops = 20000 * fa_test_scale();
    if (FA_TEST_SANITIZED)
        ops /= 2;
    for (int policy = 0; policy < FA_POLICY_COUNT; policy++) {
        compare(policy, true, false, 7 + policy, ops);
        compare(policy, false, false, 70 + policy, ops / 2);
        compare(policy, true, true, 700 + policy, ops / 2); /* allocations fail too */
    }
    printf("lab/tree_vs_list: ok\n");
    return 0;
}

/* ctest labels: walk */
/* The walk of one classic heap (src/lab/heap/heap_walk.h) on bare heaps of every policy, index and
 * coalescing setting: the blocks it visits tile the heap from start to break in address
 * order, its used blocks are exactly the live pointers, and its sums equal the heap's
 * counters (heap_bytes, free_size, free_blocks, blocks). */
#include <stdint.h>
#include <string.h>

#include "lab/heap/heap_walk.h"
#include "check.h"

#define LIVE 256

struct tally {
    uintptr_t expect_next; /* where the next block must start */
    uint64_t blocks, used_blocks, used_size, free_blocks, free_size;
    void **live; /* the program's live pointers, sorted by address */
    size_t live_count, live_seen;
};

static void tally_block(uintptr_t block, size_t size, bool used, void *arg)
{
    struct tally *t = arg;
    CHECK_EQ(block, t->expect_next);
    CHECK_EQ(size % FA_BLOCK_ALIGN, 0);
    CHECK_GE(size, FA_BLOCK_MIN);
    t->expect_next = block + size;
    t->blocks++;
    if (used) {
        /* In address order, the used blocks are the live pointers one by one. */
        CHECK_LT(t->live_seen, t->live_count);
        CHECK_EQ((uintptr_t)fa_block_payload(block), (uintptr_t)t->live[t->live_seen]);
        t->live_seen++;
        t->used_blocks++;
        t->used_size += size;
    } else {
        t->free_blocks++;
        t->free_size += size;
    }
}

static int by_address(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
    return x < y ? -1 : x > y;
}

static void walk_and_compare(fa_classic_heap *h, void **live)
{
    void *sorted[LIVE];
    size_t n = 0;
    for (int i = 0; i < LIVE; i++)
        if (live[i])
            sorted[n++] = live[i];
    qsort(sorted, n, sizeof sorted[0], by_address);
    struct tally t = {.expect_next = h->start, .live = sorted, .live_count = n};
    _fa_classic_heap_walk(h, tally_block, &t);
    CHECK_EQ(t.expect_next, h->brk);
    CHECK_EQ(t.live_seen, n);
    CHECK_EQ(t.blocks, h->count.blocks);
    CHECK_EQ(t.free_blocks, h->count.free_blocks);
    CHECK_EQ(t.free_size, h->count.free_size);
    CHECK_EQ(t.used_size + t.free_size, h->count.heap_bytes);
}

static void count_calls(uintptr_t block, size_t size, bool used, void *arg)
{
    (void)block, (void)size, (void)used;
    ++*(unsigned *)arg;
}

int main(void)
{
    for (int policy = 0; policy < FA_POLICY_COUNT; policy++) {
        for (int index = 0; index < 2; index++) {
            for (int coalesce = 0; coalesce < 2; coalesce++) {
                struct fa_classic_heap_config cfg = {
                    .policy = policy, .index = index, .coalesce = coalesce, .exact_max = 128};
                fa_classic_heap *h = _fa_classic_heap_create(&cfg, (size_t)64 << 20);
                CHECK(h != NULL);
                /* An empty heap: nothing to visit. */
                unsigned calls = 0;
                _fa_classic_heap_walk(h, count_calls, &calls);
                CHECK_EQ(calls, 0);

                void *live[LIVE] = {0};
                fa_rng rng;
                fa_rng_seed(&rng, 77 + policy * 4 + index * 2 + coalesce);
                for (int round = 0; round < 6; round++) {
                    for (int k = 0; k < 200; k++) {
                        int i = (int)fa_rng_below(&rng, LIVE);
                        if (live[i]) {
                            _fa_classic_heap_free(h, live[i], "free");
                            live[i] = NULL;
                        } else {
                            live[i] = _fa_classic_heap_alloc(h, 1 + fa_rng_below(&rng, 3000));
                            CHECK(live[i] != NULL);
                        }
                    }
                    walk_and_compare(h, live);
                }
                for (int i = 0; i < LIVE; i++)
                    if (live[i])
                        _fa_classic_heap_free(h, live[i], "free");
                memset(live, 0, sizeof live);
                walk_and_compare(h, live);
                _fa_classic_heap_destroy(h);
            }
        }
    }
    printf("lab/heap_walk: ok\n");
    return 0;
}

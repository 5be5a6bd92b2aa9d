/* Long random sequences of malloc, aligned malloc, realloc and free with the invariant checker
 * after every operation: every policy x index x coalescing on a bare heap, and every policy x
 * index x lock mode through a lab. Block contents are checked too: the allocator must never
 * write into a live block. */
#include <stdint.h>
#include <string.h>

#include "lab/threads/lab_instance.h"
#include "check.h"

#define LIVE 192

struct block {
    unsigned char *p;
    size_t n;
    uint64_t id;
};

static size_t random_size(fa_rng *rng)
{
    switch (fa_rng_below(rng, 8)) {
    case 0: return (size_t)fa_rng_below(rng, 17); /* 0..16 */
    case 1:
    case 2:
    case 3: return 1 + (size_t)fa_rng_below(rng, 256);
    case 4:
    case 5: return 1 + (size_t)fa_rng_below(rng, 2048);
    case 6: return 1 + (size_t)fa_rng_below(rng, 16384);
    default: return 1 + (size_t)fa_rng_below(rng, 100000);
    }
}

/* The operations, on either a bare heap or a lab. */
struct target {
    fa_classic_heap *heap;
    struct fa_lab *lab;
};

static void *t_alloc(struct target *t, size_t align, size_t n)
{
    if (t->heap)
        return align ? _fa_classic_heap_alloc_aligned(t->heap, align, n)
                     : _fa_classic_heap_alloc(t->heap, n);
    return _fa_lab_instance_alloc(t->lab, align, n);
}

static void t_free(struct target *t, void *p)
{
    if (t->heap)
        _fa_classic_heap_free(t->heap, p, "free");
    else
        _fa_lab_instance_free(t->lab, p, "free");
}

/* realloc; NULL only if out of memory (the bare heap moves by hand, like the lab does). */
static void *t_realloc(struct target *t, void *p, size_t old, size_t n)
{
    if (!t->heap)
        return _fa_lab_instance_realloc(t->lab, p, n);
    if (_fa_classic_heap_resize(t->heap, p, n))
        return p;
    void *q = _fa_classic_heap_alloc(t->heap, n);
    if (q) {
        memcpy(q, p, old < n ? old : n);
        _fa_classic_heap_free(t->heap, p, "free");
    }
    return q;
}

static void t_check(struct target *t)
{
    if (t->heap)
        _fa_classic_heap_check(t->heap);
    else if (_fa_lab_instance_check(t->lab) == 0) {
        /* No heap checked: only right while every allocation went to a direct mapping. */
        struct fa_lab_stats s;
        _fa_lab_instance_stats(t->lab, &s);
        CHECK_EQ(s.heaps, 0);
    }
}

static size_t t_usable(struct target *t, void *p)
{
    return t->heap ? _fa_classic_heap_usable(t->heap, p, "test")
                   : _fa_lab_instance_usable(t->lab, p);
}

static void run(struct target *t, uint64_t seed, unsigned ops)
{
    static struct block live[LIVE];
    memset(live, 0, sizeof live);
    fa_rng rng;
    fa_rng_seed(&rng, seed);
    uint64_t next_id = 1;
    for (unsigned op = 0; op < ops; op++) {
        struct block *b = &live[fa_rng_below(&rng, LIVE)];
        unsigned what = (unsigned)fa_rng_below(&rng, 10);
        if (!b->p) {
            size_t n = random_size(&rng);
            size_t align = what == 0 ? (size_t)32 << fa_rng_below(&rng, 8) : 0;
            b->p = t_alloc(t, align, n);
            CHECK(b->p != NULL);
            CHECK_ALIGNED(b->p, align ? align : 16);
            CHECK_GE(t_usable(t, b->p), n);
            b->n = n;
            b->id = next_id++;
            fa_pattern_fill(b->p, n, b->id);
        } else if (what < 3) {
            CHECK_PATTERN(b->p, b->n, b->id);
            size_t n = 1 + random_size(&rng);
            unsigned char *q = t_realloc(t, b->p, b->n, n);
            CHECK(q != NULL);
            CHECK_PATTERN(q, b->n < n ? b->n : n, b->id);
            b->p = q;
            b->n = n;
            fa_pattern_fill(q, n, b->id);
        } else {
            CHECK_PATTERN(b->p, b->n, b->id);
            t_free(t, b->p);
            b->p = NULL;
        }
        t_check(t);
    }
    for (int i = 0; i < LIVE; i++) {
        if (live[i].p) {
            CHECK_PATTERN(live[i].p, live[i].n, live[i].id);
            t_free(t, live[i].p);
        }
    }
    t_check(t);
}

int main(void)
{
    unsigned ops = 3000 * fa_test_scale();
    if (FA_TEST_SANITIZED)
        ops /= FA_TEST_TSAN ? 4 : 2;
    for (int policy = 0; policy < FA_POLICY_COUNT; policy++) {
        for (int index = 0; index < 2; index++) {
            for (int coalesce = 0; coalesce < 2; coalesce++) {
                struct fa_classic_heap_config cfg = {
                    .policy = policy, .index = index, .coalesce = coalesce, .exact_max = 128};
                struct target t = {_fa_classic_heap_create(&cfg, (size_t)512 << 20), NULL};
                CHECK(t.heap != NULL);
                run(&t, 1000 + policy * 10 + index * 2 + coalesce, ops);
                CHECK_EQ(t.heap->count.mallocs, t.heap->count.frees);
                CHECK_EQ(t.heap->count.free_size, t.heap->count.heap_bytes); /* all free */
                if (policy == FA_POLICY_SLAB) /* every page returned, runs not merged */
                    CHECK_EQ(t.heap->count.free_size % FA_SLAB_PAGE, 0);
                else if (coalesce && policy == FA_POLICY_BUDDY) /* the largest buddies */
                    CHECK_EQ(t.heap->count.free_blocks,
                             __builtin_popcountll(t.heap->count.heap_bytes));
                else if (coalesce)
                    CHECK_LE(t.heap->count.free_blocks, 1); /* everything merged back */
                else
                    CHECK_EQ(t.heap->count.coalesces, 0); /* not even by realloc */
                _fa_classic_heap_destroy(t.heap);
            }
            for (int lock = 0; lock <= FA_LOCK_ARENAS; lock++) {
                struct fa_lab_config cfg = {
                    .heap = {.policy = policy, .index = index, .coalesce = true, .exact_max = 128},
                    .lock = lock,
                    .arenas = 3,
                    .direct = lock == FA_LOCK_ARENAS ? 65536 : 0,
                    .slot_size = (size_t)256 << 20,
                    .max_heaps = 4,
                };
                struct target t = {NULL, _fa_lab_instance_create(&cfg)};
                CHECK(t.lab != NULL);
                run(&t, 2000 + policy * 10 + index * 3 + lock, ops / 2);
                struct fa_lab_stats s;
                _fa_lab_instance_stats(t.lab, &s);
                CHECK_EQ(s.mallocs, s.frees);
                CHECK_EQ(s.direct_allocs, s.direct_frees);
                CHECK_EQ(s.direct_bytes, 0);
                if (lock == FA_LOCK_ARENAS)
                    CHECK_GT(s.direct_allocs, 0);
                _fa_lab_instance_destroy(t.lab);
            }
        }
    }
    printf("lab/random_check: ok\n");
    return 0;
}

/* ctest labels: integrity */
/* Random alloc/realloc/free sequences on one thread. Every block carries a
 * pattern derived from its allocation id, checked before every realloc/free,
 * periodically for all live blocks, and at the end: catches overlapping blocks,
 * corruption by the allocator's metadata and realloc losing contents. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fitalloc.h"

#define SLOTS 2048
#define MIB ((size_t)1 << 20)
#define LIVE_LIMIT (256 * MIB)

typedef struct {
    unsigned char *p;
    size_t n;
    size_t align;
    uint64_t id;
    int from_aligned_alloc;
} slot;

static slot slots[SLOTS];
static size_t live_bytes;
static uint64_t next_id = 1;

static size_t pick_size(fa_rng *r)
{
    if (fa_rng_below(r, 600) == 0)
        return 2 * MIB + (size_t)fa_rng_below(r, 30 * MIB); /* a few huge */
    if (fa_rng_below(r, 50) == 0)
        return (size_t)fa_rng_below(r, 17); /* tiny incl. 0 */
    return fa_rng_logsize(r, MIB);
}

static void do_alloc(fa_rng *r, slot *s)
{
    size_t n = pick_size(r);
    unsigned kind = (unsigned)fa_rng_below(r, 20);
    unsigned char *p;
    size_t align = 16;
    if (kind < 13) {
        p = (unsigned char *)fa_malloc(n);
    } else if (kind < 16) {
        p = (unsigned char *)fa_calloc(1, n);
        CHECK(p != NULL);
        CHECK_BYTES(p, n, 0);
    } else if (kind < 18) {
        align = (size_t)1 << (4 + fa_rng_below(r, 13)); /* 16 .. 64 KiB */
        p = (unsigned char *)fa_aligned_alloc(align, n);
    } else {
        align = (size_t)1 << (3 + fa_rng_below(r, 10)); /* 8 .. 4 KiB */
        void *q = NULL;
        CHECK_EQ(fa_posix_memalign(&q, align, n), 0);
        p = (unsigned char *)q;
    }
    CHECK_MSG(p != NULL, "allocation of %zu bytes (kind %u) failed, errno %d", n, kind, errno);
    CHECK_ALIGNED(p, align);
    CHECK_GE(fa_malloc_usable_size(p), n);
    s->p = p;
    s->n = n;
    s->align = align;
    s->from_aligned_alloc = (kind >= 16 && kind < 18);
    s->id = next_id++;
    fa_pattern_fill(p, n, s->id);
    live_bytes += n;
}

static void do_free(fa_rng *r, slot *s)
{
    CHECK_PATTERN(s->p, s->n, s->id);
    switch (fa_rng_below(r, 4)) {
    case 0: fa_free_sized(s->p, s->n); break;
    case 1:
        if (s->from_aligned_alloc) {
            fa_free_aligned_sized(s->p, s->align, s->n);
            break;
        }
        /* fall through */
    default: fa_free(s->p);
    }
    live_bytes -= s->n;
    s->p = NULL;
}

static void do_realloc(fa_rng *r, slot *s)
{
    CHECK_PATTERN(s->p, s->n, s->id);
    size_t n;
    switch (fa_rng_below(r, 4)) {
    case 0: /* shrink a bit */ n = s->n - s->n / (2 + fa_rng_below(r, 8)); break;
    case 1: /* grow a bit */ n = s->n + 1 + s->n / (2 + fa_rng_below(r, 8)); break;
    default: n = pick_size(r);
    }
    if (n == 0)
        n = 1;
    unsigned char *q = (unsigned char *)fa_realloc(s->p, n);
    CHECK_MSG(q != NULL, "fa_realloc(%p, %zu) failed", (void *)s->p, n);
    CHECK_ALIGNED(q, 16);
    CHECK_GE(fa_malloc_usable_size(q), n);
    CHECK_PATTERN(q, s->n < n ? s->n : n, s->id);
    if (n > s->n) {
        /* continue the pattern into the new part (fill whole block: simpler) */
        fa_pattern_fill(q, n, s->id);
    }
    live_bytes = live_bytes - s->n + n;
    s->p = q;
    s->n = n;
    s->align = 16;
    s->from_aligned_alloc = 0;
}

static int cmp_slot(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const slot *)a)->p, y = (uintptr_t)((const slot *)b)->p;
    return x < y ? -1 : x > y;
}

static void check_all(void)
{
    static slot sorted[SLOTS];
    size_t k = 0;
    for (int i = 0; i < SLOTS; i++) {
        if (slots[i].p == NULL)
            continue;
        CHECK_PATTERN(slots[i].p, slots[i].n, slots[i].id);
        sorted[k++] = slots[i];
    }
    qsort(sorted, k, sizeof sorted[0], cmp_slot);
    for (size_t i = 1; i < k; i++)
        CHECK_MSG((uintptr_t)sorted[i - 1].p + fa_malloc_usable_size(sorted[i - 1].p) <=
                      (uintptr_t)sorted[i].p,
                  "block %p (usable %zu) overlaps %p", (void *)sorted[i - 1].p,
                  fa_malloc_usable_size(sorted[i - 1].p), (void *)sorted[i].p);
}

int main(void)
{
    unsigned long ops = fa_test_ops(40000);
    struct fa_stats s0, s1;
    s0.size = s1.size = sizeof s0;
    /* A large block's free starts the purge thread, whose creation allocates: before s0. */
    fa_free(fa_malloc(4 * MIB));
    CHECK_EQ(fa_stats_get(&s0), 0);

    for (uint64_t seed = 1; seed <= 2; seed++) {
        fa_rng r;
        fa_rng_seed(&r, seed * 0x1234567);
        for (unsigned long op = 0; op < ops / 2; op++) {
            slot *s = &slots[fa_rng_below(&r, SLOTS)];
            if (s->p == NULL) {
                if (live_bytes > LIVE_LIMIT)
                    continue;
                do_alloc(&r, s);
            } else if (live_bytes > LIVE_LIMIT || fa_rng_below(&r, 10) < 5) {
                do_free(&r, s);
            } else {
                do_realloc(&r, s);
            }
            if (op % 5000 == 4999)
                check_all();
        }
        check_all();
        /* free in address-unrelated order: every other slot first, then the rest */
        for (int pass = 0; pass < 2; pass++)
            for (int i = pass; i < SLOTS; i += 2)
                if (slots[i].p != NULL)
                    do_free(&r, &slots[i]);
        CHECK_EQ(live_bytes, 0);
    }

    CHECK_EQ(fa_stats_get(&s1), 0);
    /* everything allocated here was freed: counters agree (no other thread runs) */
    CHECK_EQ(s1.allocs - s0.allocs, s1.frees - s0.frees);
    CHECK_EQ(s1.bytes_in_use, s0.bytes_in_use);
    CHECK_GE(s1.allocs - s0.allocs, ops / 4);
    printf("engine/random_single: ok (%lu ops)\n", ops);
    return 0;
}

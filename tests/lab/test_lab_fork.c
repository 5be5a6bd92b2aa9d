/* ctest labels: reliability */
/* The policy lab (FITALLOC_MODE=lab) across fork() while other threads allocate, for each thread
 * strategy: FITALLOC_LOCK=global, thread and arenas. The test runs itself again once per strategy;
 * there three threads loop on malloc/free (with realloc and aligned blocks) of many sizes and
 * pass blocks to each other, while the main thread forks several times. Each child checks that
 * the blocks made before the fork are intact, frees and reallocates them (also those of the
 * threads that do not exist in the child), allocates and frees thousands of blocks of several
 * sizes (small to 1 MiB, aligned ones, calloc zeroed), passes fa_lab_check() and exits 0; a
 * deadlock in the lab's locks kills it with SIGALRM. The parent checks every child's status. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "blk.h"
#include "check.h"
#include "fitalloc-lab.h"
#include "fitalloc.h"
#include "fork_stress.h"
#include "rerun.h"

static void blk_new(blk *b, fa_rng *r, size_t max)
{
    size_t n = fa_rng_logsize(r, max);
    unsigned how = (unsigned)fa_rng_below(r, 8);
    b->p = how == 0   ? fa_aligned_alloc((size_t)64 << fa_rng_below(r, 7), n)
           : how == 1 ? fa_calloc(1, n)
                      : fa_malloc(n);
    if (how == 1 && b->p)
        CHECK_BYTES(b->p, n, 0);
    blk_fill(b, n);
}

static void blk_grow(blk *b, fa_rng *r)
{
    CHECK_PATTERN(b->p, b->n, b->id);
    size_t n = b->n + 1 + (size_t)fa_rng_below(r, 3 * b->n + 100);
    unsigned char *q = fa_realloc(b->p, n);
    CHECK(q != NULL);
    CHECK_PATTERN(q, b->n, b->id);
    b->p = q;
    b->n = n;
    fa_pattern_fill(q, n, b->id);
}

static void worker_round(blk *slots, int nslots, fa_rng *r)
{
    for (int k = 0; k < 32; k++) {
        blk *b = &slots[fa_rng_below(r, (uint64_t)nslots)];
        if (b->p && fa_rng_below(r, 4) == 0)
            blk_grow(b, r);
        else {
            if (b->p)
                blk_del(b);
            blk_new(b, r, fa_rng_below(r, 64) ? 8192 : 1 << 20);
        }
    }
}

static void child_main(int iteration)
{
    fa_rng r;
    fa_rng_seed(&r, 1000 + (uint64_t)iteration);
    for (int i = 0; i < MINE; i++) {
        if (i % 3 == 0)
            blk_grow(&mine[i], &r);
        else if (i % 3 == 1) {
            blk_del(&mine[i]);
            blk_new(&mine[i], &r, 100000);
        } else
            CHECK_PATTERN(mine[i].p, mine[i].n, mine[i].id);
    }
    for (int i = 0; i < XSLOTS; i++) { /* the workers' blocks: their threads are gone */
        if (!xslots[i].p)
            continue;
        if (i % 2)
            blk_del(&xslots[i]);
        else {
            blk_grow(&xslots[i], &r);
            blk_del(&xslots[i]);
        }
    }
    static blk v[1024];
    for (int round = 0; round < 4; round++) {
        size_t max = round == 0 ? 64 : round == 1 ? 4096 : round == 2 ? 65536 : 1 << 20;
        int n = round == 3 ? 128 : 1024;
        for (int i = 0; i < n; i++)
            blk_new(&v[i], &r, max);
        for (int i = 0; i < n; i += 2)
            blk_del(&v[i]);
        for (int i = 0; i < n; i += 2)
            blk_new(&v[i], &r, max);
        for (int i = 0; i < n; i++)
            blk_del(&v[(i * 389) % n]);
    }
    CHECK_EQ(fa_lab_check(), 0);
    struct fa_lab_stats st;
    st.size = sizeof st;
    CHECK_EQ(fa_lab_stats_get(&st), 0);
    CHECK_GE(st.mallocs, 4800);
    CHECK_LE(st.frees, st.mallocs);
    for (int i = 0; i < MINE; i++)
        blk_del(&mine[i]);
    CHECK_EQ(fa_lab_check(), 0);
}

static int run(const char *lock)
{
    CHECK_EQ(fa_option_get("mode"), 1);
    static const char *const locks[] = {"global", "thread", "arenas"};
    long long l = fa_option_get("lock");
    CHECK_MSG(l >= 0 && l < 3 && strcmp(locks[l], lock) == 0, "FITALLOC_LOCK is %lld, not %s", l,
              lock);
    int forks = (FA_TEST_TSAN ? 3 : 8) * (int)fa_test_scale();

    fa_rng r;
    fa_rng_seed(&r, 1);
    for (int i = 0; i < MINE; i++)
        blk_new(&mine[i], &r, 200000);
    fork_stress_start(worker_round);
    for (int f = 0; f < forks; f++) {
        fork_stress_wait(4);
        for (int k = 0; k < 16; k++) { /* main allocates right up to the fork */
            int i = (int)fa_rng_below(&r, MINE);
            blk_del(&mine[i]);
            blk_new(&mine[i], &r, 200000);
        }
        fork_stress_fork(child_main, f, lock);
    }
    fork_stress_finish();
    CHECK_EQ(fa_lab_check(), 0);
    printf("lab, lock %s: %d forks ok\n", lock, forks);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "--lock") == 0)
        return run(argv[2]);
    static const char *const locks[] = {"global", "thread", "arenas"};
    for (int i = 0; i < 3; i++) {
        char lock[64];
        snprintf(lock, sizeof lock, "FITALLOC_LOCK=%s", locks[i]);
        const char *env[] = {"FITALLOC_MODE=lab", lock, "FITALLOC_LAB_ARENA", NULL};
        char *args[] = {argv[0], (char *)"--lock", (char *)locks[i], NULL};
        fa_test_rerun(lock, env, args);
    }
    printf("lab/lab_fork: ok\n");
    return 0;
}

/* ctest labels: threads */
/* fork() while other threads allocate: the child must be able to allocate,
 * free (also blocks from other threads' heaps), create a thread and exit.
 * A child that deadlocks in the allocator is killed by alarm() (SIGALRM) and
 * the test fails. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "blk.h"
#include "check.h"
#include "fitalloc.h"
#include "fork_stress.h"
#include "threads.h"

static void blk_new(blk *b, size_t n)
{
    b->p = (unsigned char *)fa_malloc(n);
    blk_fill(b, n);
}

static void worker_round(blk *slots, int nslots, fa_rng *r)
{
    for (int k = 0; k < 64; k++) {
        blk *b = &slots[fa_rng_below(r, (uint64_t)nslots)];
        if (b->p)
            blk_del(b);
        size_t n = fa_rng_below(r, 256) == 0 ? (size_t)fa_rng_below(r, 2u << 20)
                                             : fa_rng_logsize(r, 16384);
        blk_new(b, n);
    }
}

static void *child_thread(void *arg)
{
    (void)arg;
    fa_rng r;
    fa_rng_seed(&r, 99);
    blk b[128];
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < 128; i++)
            blk_new(&b[i], fa_rng_logsize(&r, 65536));
        for (int i = 0; i < 128; i++)
            blk_del(&b[i]);
    }
    return NULL;
}

static void child_main(int iteration)
{
    fa_rng r;
    fa_rng_seed(&r, 1000 + (uint64_t)iteration);

    /* blocks main made before the fork: intact, freeable, replaceable */
    for (int i = 0; i < MINE; i++) {
        CHECK_PATTERN(mine[i].p, mine[i].n, mine[i].id);
        if (i % 2) {
            blk_del(&mine[i]);
            blk_new(&mine[i], fa_rng_logsize(&r, 100000));
        }
    }
    /* blocks made by the workers (whose threads do not exist here) */
    for (int i = 0; i < XSLOTS; i++) {
        if (xslots[i].p == NULL)
            continue;
        CHECK_PATTERN(xslots[i].p, xslots[i].n, xslots[i].id);
        if (i % 2)
            blk_del(&xslots[i]);
        else {
            unsigned char *q = (unsigned char *)fa_realloc(xslots[i].p, xslots[i].n + 1000);
            CHECK(q != NULL);
            CHECK_PATTERN(q, xslots[i].n, xslots[i].id);
            fa_free(q);
            xslots[i].p = NULL;
        }
    }
    /* lots of sizes, including large */
    static blk v[512];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 512; i++) {
            size_t n = (i % 128 == 0) ? ((size_t)1 << 20) + (size_t)fa_rng_below(&r, 4u << 20)
                                      : fa_rng_logsize(&r, 1u << 16);
            blk_new(&v[i], n);
        }
        for (int i = 0; i < 512; i++)
            blk_del(&v[(i * 37) % 512]);
    }
    void *c = fa_calloc(1000, 100);
    CHECK(c != NULL);
    CHECK_BYTES(c, 100000, 0);
    fa_free(c);
    struct fa_stats s;
    s.size = sizeof s;
    CHECK_EQ(fa_stats_get(&s), 0);
    CHECK_GE(s.allocs, 1536);

/* Not under the sanitizers: TSan does not support threads after a multi-threaded fork, and
 * gcc 12's ASan runtime does not hold its own allocator's lock across fork, so a child whose
 * parent had a thread inside ASan's malloc deadlocks in pthread_create (3 runs in 20 here). */
#if !FA_TEST_SANITIZED
    fa_test_on_thread(child_thread, NULL);
#else
    (void)child_thread;
#endif
    for (int i = 0; i < MINE; i++)
        blk_del(&mine[i]);
}

int main(void)
{
    unsigned scale = fa_test_scale();
    int forks = 25 * (int)scale;
    if (FA_TEST_TSAN)
        forks /= 4;

    fa_rng r;
    fa_rng_seed(&r, 1);
    for (int i = 0; i < MINE; i++)
        blk_new(&mine[i], fa_rng_logsize(&r, 200000));

    fork_stress_start(worker_round);
    for (int f = 0; f < forks; f++) {
        fork_stress_wait(3);
        /* main allocates too, right up to the fork */
        for (int k = 0; k < 16; k++) {
            int i = (int)fa_rng_below(&r, MINE);
            blk_del(&mine[i]);
            blk_new(&mine[i], fa_rng_logsize(&r, 200000));
        }
        fork_stress_fork(child_main, f, "process/fork");
    }
    fork_stress_finish();
    printf("process/fork: ok (%d forks)\n", forks);
    return 0;
}

/* ctest labels: integrity */
/* Random alloc/realloc/free on several threads, with blocks migrating between
 * threads through a mutex-guarded exchange array (so blocks are freed and
 * realloc'ed by threads other than the one that allocated them), and phases
 * where threads exit while other threads still hold their blocks. Every block
 * carries a pattern derived from its id, checked before every realloc/free. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fitalloc.h"

#define NTHREADS 4
#define SLOTS 512
#define XSLOTS 64
#define MIB ((size_t)1 << 20)
#define LIVE_LIMIT (48 * MIB) /* per thread */

typedef struct {
    unsigned char *p;
    size_t n;
    uint64_t id;
    size_t align;
    int from_aligned_alloc;
} blk;

typedef struct {
    int index;
    fa_rng rng;
    blk slots[SLOTS];
    size_t live_bytes;
    unsigned long ops;
    unsigned long received; /* blocks taken from the exchange that another thread made */
} worker;

static pthread_mutex_t xlock = PTHREAD_MUTEX_INITIALIZER;
static blk xslots[XSLOTS];
static pthread_barrier_t start_barrier;
static atomic_uint_fast64_t next_id = 1;

/* TSan makes every byte checked expensive: smaller blocks there. */
#define MAX_SMALL (FA_TEST_TSAN ? 256 * 1024 : MIB)

static size_t pick_size(fa_rng *r)
{
    if (fa_rng_below(r, FA_TEST_TSAN ? 4000 : 1000) == 0)
        return 2 * MIB + (size_t)fa_rng_below(r, 14 * MIB);
    if (fa_rng_below(r, 50) == 0)
        return (size_t)fa_rng_below(r, 17);
    return fa_rng_logsize(r, MAX_SMALL);
}

static void blk_alloc(fa_rng *r, blk *b)
{
    size_t n = pick_size(r);
    unsigned kind = (unsigned)fa_rng_below(r, 10);
    size_t align = 16;
    unsigned char *p;
    if (kind < 7) {
        p = (unsigned char *)fa_malloc(n);
    } else if (kind < 9) {
        p = (unsigned char *)fa_calloc(n, 1);
        CHECK(p != NULL);
        CHECK_BYTES(p, n, 0);
    } else {
        align = (size_t)1 << (5 + fa_rng_below(r, 8));
        p = (unsigned char *)fa_aligned_alloc(align, n);
    }
    CHECK_MSG(p != NULL, "allocation of %zu bytes failed, errno %d", n, errno);
    CHECK_ALIGNED(p, align);
    CHECK_GE(fa_malloc_usable_size(p), n);
    b->p = p;
    b->n = n;
    b->align = align;
    b->from_aligned_alloc = kind == 9;
    b->id = atomic_fetch_add(&next_id, 1);
    fa_pattern_fill(p, n, b->id);
}

static void blk_free(fa_rng *r, blk *b)
{
    CHECK_PATTERN(b->p, b->n, b->id);
    unsigned k = (unsigned)fa_rng_below(r, 3);
    if (k == 0)
        fa_free_sized(b->p, b->n);
    else if (k == 1 && b->from_aligned_alloc)
        fa_free_aligned_sized(b->p, b->align, b->n);
    else
        fa_free(b->p);
    b->p = NULL;
}

static void blk_realloc(fa_rng *r, blk *b, size_t n)
{
    CHECK_PATTERN(b->p, b->n, b->id);
    if (n == 0)
        n = 1 + (size_t)fa_rng_below(r, 100);
    unsigned char *q = (unsigned char *)fa_realloc(b->p, n);
    CHECK_MSG(q != NULL, "fa_realloc(%zu) failed", n);
    CHECK_ALIGNED(q, 16);
    CHECK_GE(fa_malloc_usable_size(q), n);
    CHECK_PATTERN(q, b->n < n ? b->n : n, b->id);
    if (n > b->n)
        fa_pattern_fill(q, n, b->id);
    b->p = q;
    b->n = n;
    b->align = 16;
    b->from_aligned_alloc = 0;
}

static void *worker_main(void *arg)
{
    worker *w = (worker *)arg;
    pthread_barrier_wait(&start_barrier);
    fa_rng *r = &w->rng;
    for (unsigned long op = 0; op < w->ops; op++) {
        blk *b = &w->slots[fa_rng_below(r, SLOTS)];
        unsigned what = (unsigned)fa_rng_below(r, 100);
        if (what < 8) {
            /* swap with the exchange: our block (or hole) goes, another comes */
            blk *x = &xslots[fa_rng_below(r, XSLOTS)];
            blk mine = *b;
            pthread_mutex_lock(&xlock);
            *b = *x;
            *x = mine;
            pthread_mutex_unlock(&xlock);
            if (mine.p != NULL)
                w->live_bytes -= mine.n;
            if (b->p != NULL) {
                CHECK_PATTERN(b->p, b->n, b->id);
                w->live_bytes += b->n;
                w->received++;
            }
            continue;
        }
        if (b->p == NULL) {
            if (w->live_bytes > LIVE_LIMIT)
                continue;
            blk_alloc(r, b);
            w->live_bytes += b->n;
        } else if (w->live_bytes > LIVE_LIMIT || what < 55) {
            w->live_bytes -= b->n;
            blk_free(r, b);
        } else {
            size_t old = b->n;
            blk_realloc(r, b, what < 70 ? old / 2 : pick_size(r));
            w->live_bytes = w->live_bytes - old + b->n;
        }
    }
    return NULL;
}

/* Phase 2 helpers: threads that allocate and exit, and threads that free. */
#define PHASE2_PER_THREAD 400
static blk orphan[NTHREADS][PHASE2_PER_THREAD];

static void *orphan_maker(void *arg)
{
    int t = (int)(intptr_t)arg;
    fa_rng r;
    fa_rng_seed(&r, 0xabc + (uint64_t)t);
    for (int i = 0; i < PHASE2_PER_THREAD; i++) {
        blk_alloc(&r, &orphan[t][i]);
        if (orphan[t][i].n > 4 * MIB) { /* keep the phase small */
            blk_realloc(&r, &orphan[t][i], 4 * MIB);
        }
    }
    /* free a few of our own so the heap has holes */
    for (int i = 0; i < PHASE2_PER_THREAD; i += 5)
        blk_free(&r, &orphan[t][i]);
    return NULL; /* exits with most blocks still live */
}

static void *orphan_reaper(void *arg)
{
    int t = (int)(intptr_t)arg; /* frees the blocks of maker t, odd indexes */
    fa_rng r;
    fa_rng_seed(&r, 0xdef + (uint64_t)t);
    for (int i = 1; i < PHASE2_PER_THREAD; i += 2) {
        blk *b = &orphan[t][i];
        if (b->p == NULL)
            continue;
        if (i % 3 == 0)
            blk_realloc(&r, b, b->n + 100);
        blk_free(&r, b);
    }
    return NULL;
}

int main(void)
{
    unsigned long ops = fa_test_ops(12000);
    unsigned rounds = 2 * fa_test_scale();

    struct fa_stats s0, s1;
    s0.size = s1.size = sizeof s0;
    CHECK_EQ(fa_stats_get(&s0), 0);

    static worker workers[NTHREADS];
    unsigned long received = 0;
    for (unsigned round = 0; round < rounds; round++) {
        /* ---- phase 1: concurrent random ops with migration ---- */
        pthread_t th[NTHREADS];
        CHECK_EQ(pthread_barrier_init(&start_barrier, NULL, NTHREADS), 0);
        for (int t = 0; t < NTHREADS; t++) {
            worker *w = &workers[t];
            w->index = t;
            w->ops = ops;
            fa_rng_seed(&w->rng, (uint64_t)round * 1000 + (uint64_t)t + 1);
            w->live_bytes = 0;
            w->received = 0;
            for (int i = 0; i < SLOTS; i++)
                if (w->slots[i].p != NULL)
                    w->live_bytes += w->slots[i].n;
            CHECK_EQ(pthread_create(&th[t], NULL, worker_main, w), 0);
        }
        for (int t = 0; t < NTHREADS; t++)
            CHECK_EQ(pthread_join(th[t], NULL), 0);
        CHECK_EQ(pthread_barrier_destroy(&start_barrier), 0);
        for (int t = 0; t < NTHREADS; t++)
            received += workers[t].received;

        /* the threads exited; their blocks (slots and exchange) are still live:
         * check all of them, free the exchange and half of each thread's slots
         * here on main; the other half is kept for the next round's threads. */
        fa_rng r;
        fa_rng_seed(&r, 77 + round);
        for (int i = 0; i < XSLOTS; i++)
            if (xslots[i].p != NULL)
                blk_free(&r, &xslots[i]);
        for (int t = 0; t < NTHREADS; t++)
            for (int i = 0; i < SLOTS; i++) {
                blk *b = &workers[t].slots[i];
                if (b->p == NULL)
                    continue;
                CHECK_PATTERN(b->p, b->n, b->id);
                if (i % 2 == 0)
                    blk_free(&r, b);
            }
        /* hand the kept blocks to a different thread next round (rotate) */
        static blk tmp[SLOTS];
        memcpy(tmp, workers[0].slots, sizeof tmp);
        for (int t = 0; t + 1 < NTHREADS; t++)
            memcpy(workers[t].slots, workers[t + 1].slots, sizeof tmp);
        memcpy(workers[NTHREADS - 1].slots, tmp, sizeof tmp);

        /* ---- phase 2: threads allocate and exit; main and new threads free ---- */
        for (int t = 0; t < NTHREADS; t++)
            CHECK_EQ(pthread_create(&th[t], NULL, orphan_maker, (void *)(intptr_t)t), 0);
        for (int t = 0; t < NTHREADS; t++)
            CHECK_EQ(pthread_join(th[t], NULL), 0);
        /* new threads free the odd indexes of a maker that is not "theirs" */
        for (int t = 0; t < NTHREADS; t++)
            CHECK_EQ(
                pthread_create(&th[t], NULL, orphan_reaper, (void *)(intptr_t)((t + 1) % NTHREADS)),
                0);
        /* meanwhile main reallocs and frees the even indexes */
        for (int t = 0; t < NTHREADS; t++)
            for (int i = 0; i < PHASE2_PER_THREAD; i += 2) {
                blk *b = &orphan[t][i];
                if (b->p == NULL)
                    continue;
                if (i % 4 == 0)
                    blk_realloc(&r, b, b->n / 2);
                blk_free(&r, b);
            }
        for (int t = 0; t < NTHREADS; t++)
            CHECK_EQ(pthread_join(th[t], NULL), 0);
        for (int t = 0; t < NTHREADS; t++)
            for (int i = 0; i < PHASE2_PER_THREAD; i++)
                CHECK(orphan[t][i].p == NULL);
    }

    /* free what is left */
    fa_rng r;
    fa_rng_seed(&r, 5);
    for (int t = 0; t < NTHREADS; t++)
        for (int i = 0; i < SLOTS; i++)
            if (workers[t].slots[i].p != NULL)
                blk_free(&r, &workers[t].slots[i]);

    /* blocks did migrate between threads */
    CHECK_GT(received, 100);

    CHECK_EQ(fa_stats_get(&s1), 0);
    /* everything we allocated is free again; allow a little for libc's own
     * thread bookkeeping when malloc is fitalloc (normal build) */
    CHECK_MSG(s1.bytes_in_use <= s0.bytes_in_use + 256 * 1024,
              "bytes_in_use %llu at start, %llu at end", (unsigned long long)s0.bytes_in_use,
              (unsigned long long)s1.bytes_in_use);
    CHECK_SLE((long long)(s1.allocs - s0.allocs) - (long long)(s1.frees - s0.frees), 1024);
    printf("engine/random_threads: ok (%u rounds, %lu ops/thread, %lu migrated)\n", rounds, ops,
           received);
    return 0;
}

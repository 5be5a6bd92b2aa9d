/* ctest labels: threads */
/* Thousands of short-lived threads that allocate and free, some leaving
 * blocks for main to free: the memory of exited threads must be reused, so
 * committed (and reserved) memory stays bounded instead of growing with the
 * number of threads. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fitalloc.h"

#define MIB ((uint64_t)1 << 20)
#define PER_THREAD 300
#define LEFT 6 /* blocks each thread leaves for main */
#define CONCURRENT 2

typedef struct {
    uint64_t seed;
    unsigned char *left[LEFT];
    size_t left_n[LEFT];
} job;

static void *short_thread(void *arg)
{
    job *j = (job *)arg;
    fa_rng r;
    fa_rng_seed(&r, j->seed);
    unsigned char *p[PER_THREAD];
    size_t n[PER_THREAD];
    for (int i = 0; i < PER_THREAD; i++) {
        n[i] = (i == 0) ? 256 * 1024 : 1 + fa_rng_logsize(&r, 32768); /* >= 2 bytes */
        p[i] = (unsigned char *)fa_malloc(n[i]);
        CHECK(p[i] != NULL);
        /* touch every page, mark both ends */
        for (size_t off = 0; off < n[i]; off += 4096)
            p[i][off] = (unsigned char)i;
        p[i][n[i] - 1] = (unsigned char)(i ^ 0x5a);
    }
    /* free in a scrambled order, except LEFT blocks handed to main */
    for (int k = 0; k < PER_THREAD; k++) {
        int i = (k * 7) % PER_THREAD;
        CHECK_EQ(p[i][0], (unsigned char)i);
        CHECK_EQ(p[i][n[i] - 1], (unsigned char)(i ^ 0x5a));
        if (i < LEFT) {
            j->left[i] = p[i];
            j->left_n[i] = n[i];
        } else {
            fa_free(p[i]);
        }
    }
    return NULL;
}

static void snap(struct fa_stats *s)
{
    s->size = sizeof *s;
    CHECK_EQ(fa_stats_get(s), 0);
}

int main(void)
{
    unsigned scale = fa_test_scale();
    unsigned total = 2000 * scale;
    if (FA_TEST_TSAN)
        total = 400 * scale;
    const unsigned batches = 20;
    unsigned per_batch = total / batches;

    struct fa_stats s0, s;
    snap(&s0);
    uint64_t base_committed = 0, base_reserved = 0;
    uint64_t seed = 1;
    for (unsigned b = 0; b < batches; b++) {
        for (unsigned t = 0; t < per_batch; t += CONCURRENT) {
            pthread_t th[CONCURRENT];
            job jobs[CONCURRENT];
            for (int c = 0; c < CONCURRENT; c++) {
                memset(&jobs[c], 0, sizeof jobs[c]);
                jobs[c].seed = seed++;
                CHECK_EQ(pthread_create(&th[c], NULL, short_thread, &jobs[c]), 0);
            }
            for (int c = 0; c < CONCURRENT; c++) {
                CHECK_EQ(pthread_join(th[c], NULL), 0);
                for (int i = 0; i < LEFT; i++) {
                    CHECK_EQ(jobs[c].left[i][0], (unsigned char)i);
                    CHECK_EQ(jobs[c].left[i][jobs[c].left_n[i] - 1], (unsigned char)(i ^ 0x5a));
                    fa_free(jobs[c].left[i]);
                }
            }
        }
        snap(&s);
        if (b < 2) { /* baseline: the first two batches */
            if (s.committed > base_committed)
                base_committed = s.committed;
            if (s.reserved > base_reserved)
                base_reserved = s.reserved;
        }
    }
    snap(&s);
    unsigned done = per_batch * batches;
    printf("threads: %u, committed: base %llu final %llu, reserved: base %llu final %llu, "
           "threads %llu, abandoned %llu, segments %llu\n",
           done, (unsigned long long)base_committed, (unsigned long long)s.committed,
           (unsigned long long)base_reserved, (unsigned long long)s.reserved,
           (unsigned long long)s.threads, (unsigned long long)s.abandoned,
           (unsigned long long)s.segments);
    /* each thread touched >= 256 KiB + its small blocks: a per-thread leak of
     * its pages would grow committed by hundreds of MiB */
    CHECK_MSG(s.committed <= 2 * base_committed + 16 * MIB,
              "committed grew from %llu after the first batches to %llu after %u threads",
              (unsigned long long)base_committed, (unsigned long long)s.committed, done);
    CHECK_MSG(s.reserved <= 2 * base_reserved + 64 * MIB,
              "reserved grew from %llu after the first batches to %llu after %u threads",
              (unsigned long long)base_reserved, (unsigned long long)s.reserved, done);
    /* every block was freed (a little slack for libc's thread bookkeeping) */
    CHECK_LE(s.bytes_in_use, s0.bytes_in_use + MIB);
    CHECK_GE(s.allocs - s0.allocs, (uint64_t)done * PER_THREAD);
    CHECK_GE(s.frees - s0.frees, (uint64_t)done * PER_THREAD);
    printf("engine/short_threads: ok\n");
    return 0;
}

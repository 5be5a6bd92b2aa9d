/* ctest labels: threads */
/* Large blocks (above the largest size class) allocated, grown with realloc
 * (which may move them) and freed on several threads at once, while each
 * thread keeps a few large blocks live and keeps asking fitalloc about them.
 * Address ranges given back by one thread are mapped again by another, so a
 * block's bookkeeping must never be torn down after its range is released:
 * every live block stays known (usable size, free) and keeps its contents.
 * The test runs once with the default options and once more (re-executing
 * itself) with FITALLOC_LARGE_CACHE=0, so that every large free and every
 * moving realloc hands address space back to the OS at once. */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "rerun.h"
#include "fitalloc.h"

#define NTHREADS 4
#define KEEP 4
#define MIB ((size_t)1 << 20)

typedef struct {
    unsigned char *p;
    size_t n;
    uint64_t id;
} blk;

static pthread_barrier_t barrier;
static unsigned long iterations;
static size_t largest_class;

/* Mark the first and last 64 bytes and one word per 256 KiB (cheap: the block
 * is not touched in between, so realloc can move pages without copying). */
static void mark(blk *b)
{
    fa_pattern_fill(b->p, 64, b->id);
    fa_pattern_fill(b->p + b->n - 64, 64, b->id + 1);
    for (size_t off = 256 * 1024; off + 8 < b->n - 64; off += 256 * 1024)
        memcpy(b->p + off, &b->id, 8);
}

static void verify(const blk *b, size_t n)
{
    CHECK_PATTERN(b->p, 64, b->id);
    if (n == b->n)
        CHECK_PATTERN(b->p + b->n - 64, 64, b->id + 1);
    for (size_t off = 256 * 1024; off + 8 < n - 64; off += 256 * 1024) {
        uint64_t v;
        memcpy(&v, b->p + off, 8);
        CHECK_MSG(v == b->id, "block %p (id %llu) word at %zu lost", (void *)b->p,
                  (unsigned long long)b->id, off);
    }
    CHECK_GE(fa_malloc_usable_size(b->p), b->n);
}

static size_t large_size(fa_rng *r)
{
    return largest_class + 4096 + (size_t)fa_rng_below(r, 6 * MIB);
}

static void *worker(void *arg)
{
    uint64_t t = (uint64_t)(intptr_t)arg;
    fa_rng r;
    fa_rng_seed(&r, 77 + t);
    blk keep[KEEP];
    uint64_t id = t << 48;
    for (int i = 0; i < KEEP; i++) {
        keep[i].n = large_size(&r);
        keep[i].p = (unsigned char *)fa_malloc(keep[i].n);
        CHECK(keep[i].p != NULL);
        keep[i].id = ++id;
        mark(&keep[i]);
    }
    pthread_barrier_wait(&barrier);
    for (unsigned long it = 0; it < iterations; it++) {
        /* a block that grows step by step (moving when it cannot grow in place) */
        blk b;
        b.n = large_size(&r);
        b.p = (unsigned char *)fa_malloc(b.n);
        CHECK(b.p != NULL);
        b.id = ++id;
        mark(&b);
        int steps = 1 + (int)fa_rng_below(&r, 4);
        for (int s = 0; s < steps; s++) {
            size_t nn = b.n + MIB + (size_t)fa_rng_below(&r, 4 * MIB);
            unsigned char *q = (unsigned char *)fa_realloc(b.p, nn);
            CHECK(q != NULL);
            b.p = q;
            verify(&b, b.n < nn ? b.n : nn);
            b.n = nn;
            mark(&b);
        }
        /* sometimes shrink it back below the large threshold */
        if (fa_rng_below(&r, 4) == 0) {
            unsigned char *q = (unsigned char *)fa_realloc(b.p, 4096);
            CHECK(q != NULL);
            CHECK_PATTERN(q, 64, b.id);
            b.p = q;
            b.n = 4096;
            mark(&b);
        }
        verify(&b, b.n);
        fa_free(b.p);

        /* the blocks we keep are still known and intact; replace one */
        for (int i = 0; i < KEEP; i++)
            verify(&keep[i], keep[i].n);
        int i = (int)fa_rng_below(&r, KEEP);
        fa_free(keep[i].p);
        keep[i].n = large_size(&r);
        keep[i].p = (unsigned char *)fa_malloc(keep[i].n);
        CHECK(keep[i].p != NULL);
        keep[i].id = ++id;
        mark(&keep[i]);
    }
    for (int i = 0; i < KEEP; i++) {
        verify(&keep[i], keep[i].n);
        fa_free(keep[i].p);
    }
    return NULL;
}

static void run_phase(const char *name)
{
    struct fa_stats s;
    s.size = sizeof s;
    CHECK_EQ(fa_stats_get(&s), 0);
    for (int c = 0; c < FA_STATS_CLASSES; c++)
        if (s.size_class[c].block_size > largest_class)
            largest_class = (size_t)s.size_class[c].block_size;
    CHECK_GT(largest_class, 0);

    /* Under TSan realloc copies (no mremap, which TSan cannot follow) and every copy is
     * instrumented: fewer rounds keep it within the time limit. */
    iterations = (FA_TEST_TSAN ? 100ul : 6000ul) * fa_test_scale();
    if (FA_TEST_TSAN)
        iterations /= 6;
    CHECK_EQ(pthread_barrier_init(&barrier, NULL, NTHREADS), 0);
    pthread_t th[NTHREADS];
    for (int t = 0; t < NTHREADS; t++)
        CHECK_EQ(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t), 0);
    for (int t = 0; t < NTHREADS; t++)
        CHECK_EQ(pthread_join(th[t], NULL), 0);
    CHECK_EQ(pthread_barrier_destroy(&barrier), 0);

    struct fa_stats e;
    e.size = sizeof e;
    CHECK_EQ(fa_stats_get(&e), 0);
    CHECK_GE(e.large_allocs - s.large_allocs, (uint64_t)NTHREADS * iterations);
    CHECK_LE(e.large_in_use, s.large_in_use);
    printf("%s: ok (largest class %zu, %lu iterations/thread)\n", name, largest_class, iterations);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--no-cache-phase") == 0) {
        run_phase("large_realloc with FITALLOC_LARGE_CACHE=0");
        return 0;
    }
    run_phase("large_realloc with default options");

    /* again in a fresh process without the large-block cache */
    const char *env[] = {"FITALLOC_LARGE_CACHE=0", NULL};
    char *args[] = {argv[0], (char *)"--no-cache-phase", NULL};
    fa_test_rerun("the FITALLOC_LARGE_CACHE=0 phase", env, args);
    printf("engine/large_realloc: ok\n");
    return 0;
}

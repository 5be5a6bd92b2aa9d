/* ctest labels: reliability */
/* Large blocks' mappings come from one source (engine/large_source.c): freed ones wait in a
 * cache, a bigger request grows a cached one, and what a block no longer needs goes back to
 * the OS at once.
 *   1. A calloc'd 8 MiB block written whole and freed: its mapping stays (reserved bytes).
 *   2. A 12 MiB malloc grows that mapping: the reserved bytes grow by 4 MiB, not 12, and the
 *      block's first pages are the old ones, resident before the program writes them.
 *   3. realloc shrinks it to 1 MiB: the tail goes back to the OS (reserved drops by 11 MiB),
 *      the first MiB keeps its contents.
 *   4. Freed, the mapping serves an 8 MiB calloc that reads zero throughout, and keeps its
 *      contents through a realloc to 40 MiB.
 *   5. Four threads at once calloc blocks of 1-7 MiB, find them zero on every page, grow some
 *      and shrink some with realloc (their contents kept) and free them: mappings pass
 *      between threads through the cache, and pages another thread filled read as zero.
 * With FITALLOC_LARGE_CACHE=0 nothing is kept: step 1 unmaps, step 2 maps 12 MiB afresh.
 * The test runs itself with the cache (and a purge delay no step outlasts) and without.
 * And a program that uses its large blocks sparsely: a calloc'd block that reuses a cached
 * mapping has the old pages dropped, not written over with zeros: it reads zero, and few of its
 * pages are resident (a memset would have made them all resident, and taken a fault each).
 * And a small request served by a much bigger cached mapping, past FITALLOC_LARGE_CACHE's bound
 * on slack, with no other mapping cached: the chunks it does not reach go back to the cache, not
 * to the OS, and serve the next request with their old pages, zeroed for calloc. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rerun.h"
#include "stats.h"
#include "rss.h"
#include "fitalloc.h"

#define MIB ((size_t)1 << 20)
#define PAGE ((size_t)4096)
#define THREADS 4

static unsigned char pattern(size_t i)
{
    return (unsigned char)(i * 131u + (i >> 12) + 1); /* never 0 at a page's first byte */
}

static void *churn(void *arg)
{
    fa_rng r;
    fa_rng_seed(&r, 99 + (uintptr_t)arg);
    unsigned long rounds = fa_test_ops(150);
    for (unsigned long i = 0; i < rounds; i++) {
        size_t n = MIB + (size_t)fa_rng_below(&r, 6 * MIB);
        unsigned char *p = fa_calloc(1, n);
        CHECK(p != NULL);
        size_t word = 8 * (size_t)fa_rng_below(&r, PAGE / 8);
        for (size_t page = 0; page + PAGE <= n; page += PAGE)
            CHECK_MSG(p[page] == 0 && p[page + word] == 0, "calloc'd %zu bytes: page %zu", n,
                      page / PAGE);
        int fill = (int)(i % 255) + 1;
        memset(p, fill, n);
        if (fa_rng_below(&r, 3) == 0) {
            /* grown: in place, or moved part by part when it is made of several */
            p = fa_realloc(p, 2 * n);
            CHECK(p != NULL);
            for (size_t page = 0; page + PAGE <= n; page += PAGE)
                CHECK_MSG(p[page] == fill && p[page + word] == fill, "grown block: page %zu",
                          page / PAGE);
            memset(p + n, fill, n);
            n *= 2;
        }
        if (fa_rng_below(&r, 2)) {
            p = fa_realloc(p, n / 3 + 600 * 1024);
            CHECK(p != NULL);
            CHECK_EQ(p[0], fill);
        }
        fa_free(p);
    }
    return NULL;
}

static int sparse_child(void)
{
    const size_t n = 16 * MIB, pages = n / PAGE;
    for (int round = 0; round < 3; round++) {
        unsigned char *p = fa_calloc(1, n);
        CHECK(p != NULL);
        CHECK_LT(fa_test_resident_pages(p, n), pages / 8);
        for (size_t off = 0; off < n; off += 256 * 1024) {
            CHECK_EQ(p[off + 8], 0);
            p[off + 8] = 0x5a;
        }
        fa_free(p);
    }
    return 0;
}

static int tail_child(void)
{
    /* Live large bytes enough for a budget that caches a 20 MiB mapping. */
    void *live[2] = {fa_malloc(24 * MIB), fa_malloc(24 * MIB)};
    unsigned char *a = fa_calloc(1, 20 * MIB);
    CHECK(live[0] && live[1] && a);
    memset(a, 7, 20 * MIB);
    fa_free(a);
    uint64_t before = fa_test_stats().reserved;
    /* Mappings start 4 MiB-aligned; a block lies in its mapping's first page or the next. */
    uintptr_t base = (uintptr_t)a & ~(4 * MIB - 1);
    void *small = fa_malloc(3 * MIB); /* its mapping's first 4 MiB; 16 MiB go to the cache */
    CHECK(((uintptr_t)small & ~(4 * MIB - 1)) == base);
    CHECK_GE(fa_test_stats().reserved, before);
    unsigned char *q = fa_calloc(1, 15 * MIB);
    CHECK_MSG(((uintptr_t)q & ~(4 * MIB - 1)) == base + 4 * MIB,
              "the 15 MiB block at %p, not in the cached tail at %p", (void *)q,
              (void *)(base + 4 * MIB));
    CHECK_GE(fa_test_stats().reserved, before);
    for (size_t i = 0; i < 15 * MIB; i += 512)
        CHECK_MSG(q[i] == 0, "calloc'd byte %zu reads %d", i, q[i]);
    memset(q, 9, 15 * MIB);
    fa_free(q);
    fa_free(small);
    fa_free(live[0]);
    fa_free(live[1]);
    return 0;
}

static int child(int cache)
{
    /* 1. Freed, an 8 MiB mapping waits in the cache (not the thread's hot block: above a
     * sixteenth of FITALLOC_LARGE_CACHE); without the cache it goes back to the OS at once. */
    unsigned char *primer = fa_calloc(1, 8 * MIB);
    CHECK(primer != NULL);
    memset(primer, 1, 8 * MIB);
    uint64_t before = fa_test_stats().reserved;
    fa_free(primer);
    uint64_t after = fa_test_stats().reserved;
    if (cache) /* not less (the purge thread may start now and take a segment of its own) */
        CHECK_GE(after, before);
    else
        CHECK_LE(after + 8 * MIB, before);

    /* 2. A bigger request grows the cached mapping: only the difference is mapped, and the
     * block's first 8 MiB are the old pages, resident before the program touches them. */
    before = after;
    unsigned char *big = fa_malloc(12 * MIB);
    CHECK(big != NULL);
    after = fa_test_stats().reserved;
    size_t resident = fa_test_resident_pages(big, 7 * MIB);
    if (cache) {
        CHECK_LE(after, before + 5 * MIB);
        /* A ThreadSanitizer build grows no mapping (it does not follow mremap): a new one. */
        if (!FA_TEST_TSAN)
            CHECK_GE(resident, 7 * MIB / PAGE - 1);
    } else {
        CHECK_GE(after, before + 12 * MIB);
        CHECK_LE(resident, 1);
    }
    for (size_t i = 0; i < 12 * MIB; i++)
        big[i] = pattern(i);

    /* 3. Shrunk by realloc, the block gives its tail back to the OS at once. */
    before = fa_test_stats().reserved;
    big = fa_realloc(big, MIB);
    CHECK(big != NULL);
    after = fa_test_stats().reserved;
    CHECK_LE(after + 10 * MIB, before);
    for (size_t i = 0; i < MIB; i++)
        CHECK_MSG(big[i] == pattern(i), "byte %zu of the shrunk block changed", i);

    /* 4. Freed, its mapping (with the pattern) serves the next calloc, grown: zero throughout. */
    fa_free(big);
    unsigned char *b = fa_calloc(1, 8 * MIB);
    CHECK(b != NULL);
    for (size_t i = 0; i < 8 * MIB; i++)
        CHECK_MSG(b[i] == 0, "calloc'd byte %zu reads %d", i, b[i]);
    for (size_t i = 0; i < 8 * MIB; i++)
        b[i] = pattern(i + 7);
    b = fa_realloc(b, 40 * MIB);
    CHECK(b != NULL);
    for (size_t i = 0; i < 8 * MIB; i++)
        CHECK_MSG(b[i] == pattern(i + 7), "byte %zu lost in realloc", i);
    fa_free(b);

    pthread_t th[THREADS];
    for (uintptr_t t = 0; t < THREADS; t++)
        CHECK_EQ(pthread_create(&th[t], NULL, churn, (void *)t), 0);
    for (int t = 0; t < THREADS; t++)
        CHECK_EQ(pthread_join(th[t], NULL), 0);
    return 0;
}

int main(int argc, char **argv)
{
    (void)argc;
    const char *mode = getenv("FA_TEST_SOURCE");
    if (mode && atoi(mode) == 3)
        return tail_child();
    if (mode)
        return atoi(mode) == 2 ? sparse_child() : child(atoi(mode));
    const char *with_cache[] = {"FA_TEST_SOURCE=1", "FITALLOC_LARGE_CACHE=64M",
                                "FITALLOC_PURGE_DELAY=60000", "FITALLOC_CALLOC_POPULATE=1", NULL};
    fa_test_rerun("with the large-block cache", with_cache, argv);
    const char *without[] = {"FA_TEST_SOURCE=0", "FITALLOC_LARGE_CACHE=0",
                             "FITALLOC_CALLOC_POPULATE=1", NULL};
    fa_test_rerun("FITALLOC_LARGE_CACHE=0", without, argv);
    const char *sparse[] = {"FA_TEST_SOURCE=2", "FITALLOC_LARGE_CACHE=64M",
                            "FITALLOC_PURGE_DELAY=60000", NULL};
    fa_test_rerun("blocks used sparsely", sparse, argv);
    const char *tail[] = {"FA_TEST_SOURCE=3", "FITALLOC_LARGE_CACHE=4M",
                          "FITALLOC_PURGE_DELAY=60000", NULL};
    fa_test_rerun("a cached mapping's tail", tail, argv);
    printf("ok: large mappings are cached, grown for bigger requests, trimmed at once\n");
    return 0;
}

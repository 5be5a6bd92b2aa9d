/* ctest labels: reliability */
/* Spare pages (engine/large_spare.c): the tail of a large block handed back is kept mapped
 * and moved under the next large block that would get fresh pages, where calloc clears it.
 *   1. A calloc'd 8 MiB block written whole and freed: the program uses its large blocks
 *      whole, so spare pages may stand in for fresh ones (the mapping waits in the cache).
 *   2. A 24 MiB block (the cached mapping, grown by 16 MiB: that much is asked of the spare)
 *      written with a pattern and shrunk to 1 MiB by realloc: with the cache on, as much of
 *      its tail as was asked for stays mapped (spare), so the reserved bytes drop by 8 MiB at
 *      most.
 *   3. An 8 MiB calloc, in a new mapping (the cache is empty): spare pages stand in for its
 *      fresh ones, so the reserved bytes barely grow; every byte reads zero although those
 *      pages held the pattern. Then a 4 MiB malloc takes spare pages too. With
 *      FITALLOC_LARGE_CACHE=0 nothing is kept: the tail goes back to the OS at step 2, and
 *      step 3 maps all 8 and 4 MiB afresh.
 *   4. The calloc'd block, made of several kernel mappings now, keeps its contents through a
 *      realloc to 40 MiB (grown in place, or moved part by part).
 *   5. Four threads at once calloc blocks of 1-7 MiB, find them zero on every page, use them
 *      whole (so large blocks keep taking spare pages), grow some and shrink some with realloc
 *      (their contents kept) and free them: spare pieces pass between threads, and pages
 *      another thread filled read as zero.
 * And a program that uses its large blocks sparsely: a calloc'd block that reuses a cached
 * mapping has the old pages dropped, not written over with zeros: it reads zero, and few of its
 * pages are resident (a memset would have made them all resident, and taken a fault each).
 * The test runs itself with the cache (and a purge delay no step outlasts) and without. A
 * ThreadSanitizer build moves no pages and keeps none: there the first run expects what the
 * second does. */
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

static int child(int keep)
{
    /* A ThreadSanitizer build moves no pages (it does not follow mremap), so keeps none. */
    int spare = keep && !FA_TEST_TSAN;
    char *primer = fa_calloc(1, 8 * MIB);
    CHECK(primer != NULL);
    memset(primer, 1, 8 * MIB);
    fa_free(primer);

    unsigned char *big = fa_malloc(24 * MIB);
    CHECK(big != NULL);
    for (size_t i = 0; i < 24 * MIB; i++)
        big[i] = pattern(i);
    uint64_t before = fa_test_stats().reserved;
    big = fa_realloc(big, MIB);
    CHECK(big != NULL);
    uint64_t after = fa_test_stats().reserved;
    if (spare)
        CHECK_GE(after + 8 * MIB, before);
    else
        CHECK_LE(after + 22 * MIB, before);

    before = fa_test_stats().reserved;
    unsigned char *b = fa_calloc(1, 8 * MIB);
    CHECK(b != NULL);
    after = fa_test_stats().reserved;
    if (spare) {
        CHECK_LE(after, before + MIB);
        CHECK_LE(before, after + MIB); /* moved, not dropped */
    } else {
        CHECK_GE(after, before + 8 * MIB);
    }
    for (size_t i = 0; i < 8 * MIB; i++)
        CHECK_MSG(b[i] == 0, "calloc'd byte %zu reads %d", i, b[i]);
    before = after;
    char *m = fa_malloc(4 * MIB);
    CHECK(m != NULL);
    after = fa_test_stats().reserved;
    if (spare)
        CHECK_LE(after, before + MIB);
    else
        CHECK_GE(after, before + 4 * MIB);
    memset(m, 3, 4 * MIB);
    fa_free(m);

    for (size_t i = 0; i < 8 * MIB; i++)
        b[i] = pattern(i + 7);
    b = fa_realloc(b, 40 * MIB);
    CHECK(b != NULL);
    for (size_t i = 0; i < 8 * MIB; i++)
        CHECK_MSG(b[i] == pattern(i + 7), "byte %zu lost in realloc", i);
    memset(b + 8 * MIB, 2, 24 * MIB);
    fa_free(b);
    for (size_t i = 0; i < MIB; i++)
        CHECK_MSG(big[i] == pattern(i), "byte %zu of the shrunk block changed", i);
    fa_free(big);

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
    const char *mode = getenv("FA_TEST_SPARE");
    if (mode)
        return atoi(mode) == 2 ? sparse_child() : child(atoi(mode));
    const char *with_cache[] = {"FA_TEST_SPARE=1", "FITALLOC_LARGE_CACHE=64M",
                                "FITALLOC_PURGE_DELAY=60000", "FITALLOC_CALLOC_POPULATE=1", NULL};
    fa_test_rerun("with the large-block cache", with_cache, argv);
    const char *without[] = {"FA_TEST_SPARE=0", "FITALLOC_LARGE_CACHE=0",
                             "FITALLOC_CALLOC_POPULATE=1", NULL};
    fa_test_rerun("FITALLOC_LARGE_CACHE=0", without, argv);
    const char *sparse[] = {"FA_TEST_SPARE=2", "FITALLOC_LARGE_CACHE=64M",
                            "FITALLOC_PURGE_DELAY=60000", NULL};
    fa_test_rerun("blocks used sparsely", sparse, argv);
    printf("ok: a large block's tail is kept and moved under the next large calloc, zeroed\n");
    return 0;
}

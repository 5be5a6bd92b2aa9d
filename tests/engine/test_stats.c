/* ctest labels: api */
/* fa_stats_get, fa_stats_print, fa_collect and fa_option_get.
 *
 * The test is single-threaded except where it says so, so a snapshot is exact
 * between two calls. In the normal build malloc is fitalloc too and libc may
 * allocate behind our back (stdio, pthread): deltas are compared with >= where
 * that matters and nothing calls libc between the snapshots of exact checks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fitalloc.h"
#include "threads.h"

#define MIB ((uint64_t)1 << 20)

static void snap(struct fa_stats *s)
{
    memset(s, 0xCD, sizeof *s);
    s->size = sizeof *s;
    CHECK_EQ(fa_stats_get(s), 0);
    CHECK_EQ(s->version, FA_STATS_VERSION);
}

/* Internal consistency of a quiescent snapshot. */
static void check_consistent(const struct fa_stats *s)
{
    uint64_t allocs = s->large_allocs, frees = s->large_frees, bytes = s->large_in_use;
    int seen_zero = 0;
    for (int c = 0; c < FA_STATS_CLASSES; c++) {
        const struct fa_stats_class *k = &s->size_class[c];
        if (k->block_size == 0) {
            seen_zero = 1;
            CHECK_EQ(k->allocs, 0);
            CHECK_EQ(k->frees, 0);
            CHECK_EQ(k->live, 0);
            continue;
        }
        CHECK_MSG(!seen_zero, "size class %d (block_size %llu) after an unused entry", c,
                  (unsigned long long)k->block_size);
        CHECK_EQ(k->live, k->allocs - k->frees);
        allocs += k->allocs;
        frees += k->frees;
        bytes += k->live * k->block_size;
    }
    CHECK_EQ(s->allocs, allocs);
    CHECK_EQ(s->frees, frees);
    CHECK_EQ(s->bytes_in_use, bytes);
    CHECK_LE(s->large_frees, s->large_allocs);
    CHECK_LE(s->frees, s->allocs);
    CHECK_LE(s->committed, s->reserved);
    CHECK_LE(s->committed, s->peak_committed);
    CHECK_LE(s->bytes_in_use, s->committed);
}

static uint64_t largest_class(const struct fa_stats *s)
{
    uint64_t m = 0;
    for (int c = 0; c < FA_STATS_CLASSES; c++)
        if (s->size_class[c].block_size > m)
            m = s->size_class[c].block_size;
    return m;
}

static void test_get_basic(void)
{
    struct fa_stats s;
    void *p = fa_malloc(100);
    CHECK(p != NULL);
    snap(&s);
    CHECK_GE(s.allocs, 1);
    CHECK_GE(s.bytes_in_use, 100);
    CHECK_GT(s.reserved, 0);
    CHECK_GT(s.committed, 0);
    CHECK_GE(s.segments, 1);
    CHECK_GE(s.threads, 1);
    CHECK_GT(largest_class(&s), 0);
    check_consistent(&s);
    fa_free(p);

    /* too small a size: -1, and nothing written past out->size */
    static const uint32_t small[] = {0, 4, 7};
    for (size_t i = 0; i < sizeof small / sizeof small[0]; i++) {
        union {
            struct fa_stats st;
            unsigned char raw[sizeof(struct fa_stats)];
        } u;
        memset(&u, 0xAB, sizeof u);
        u.st.size = small[i];
        CHECK_SEQ(fa_stats_get(&u.st), -1);
        CHECK_BYTES(u.raw + sizeof(uint32_t), sizeof u.raw - sizeof(uint32_t), 0xAB);
    }
}

/* N blocks of `size`: allocs and the matching class (or large) counters grow, then fall. */
static void test_size_counts(size_t size, unsigned n)
{
    void **v = (void **)fa_malloc(n * sizeof *v);
    CHECK(v != NULL);
    struct fa_stats s0, s1, s2;
    snap(&s0);
    check_consistent(&s0);
    for (unsigned i = 0; i < n; i++) {
        v[i] = fa_malloc(size);
        CHECK(v[i] != NULL);
        memset(v[i], (int)i, size);
    }
    snap(&s1);
    check_consistent(&s1);
    CHECK_GE(s1.allocs - s0.allocs, n);
    CHECK_GE(s1.bytes_in_use - s0.bytes_in_use, (uint64_t)n * size);
    CHECK_GE(s1.committed, s1.bytes_in_use);
    CHECK_GE(s1.peak_committed, s1.committed);

    int used = -1;
    for (int c = 0; c < FA_STATS_CLASSES; c++)
        if (s1.size_class[c].allocs - s0.size_class[c].allocs >= n)
            used = c;
    if (size <= largest_class(&s0)) {
        CHECK_MSG(used >= 0, "no size class counted %u allocations of %zu bytes", n, size);
        CHECK_GE(s1.size_class[used].block_size, size);
        CHECK_GE(s1.size_class[used].live - s0.size_class[used].live, n);
        /* the block actually handed out is of that class */
        CHECK_GE(s1.size_class[used].block_size, fa_malloc_usable_size(v[0]));
        CHECK_LT(s1.large_allocs - s0.large_allocs, n);
    } else {
        CHECK_GE(s1.large_allocs - s0.large_allocs, n);
        CHECK_GE(s1.large_in_use - s0.large_in_use, (uint64_t)n * size);
    }

    for (unsigned i = 0; i < n; i++)
        fa_free(v[i]);
    snap(&s2);
    check_consistent(&s2);
    CHECK_GE(s2.frees - s1.frees, n);
    CHECK_LE(s2.bytes_in_use, s1.bytes_in_use - (uint64_t)n * size);
    if (used >= 0) {
        CHECK_GE(s2.size_class[used].frees - s1.size_class[used].frees, n);
        CHECK_LE(s2.size_class[used].live, s1.size_class[used].live - n);
    } else {
        CHECK_GE(s2.large_frees - s1.large_frees, n);
        CHECK_LE(s2.large_in_use, s1.large_in_use - (uint64_t)n * size);
    }
    fa_free(v);
}

static void test_counts(void)
{
    /* Each size's blocks in one class: up to 1 KiB, a class between two powers of two takes
     * its first blocks from the page of the power of two above (heap.c: borrowed classes). */
    static const size_t sizes[] = {1, 16, 24, 120, 1000, 4000, 20000, 100000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        test_size_counts(sizes[i], sizes[i] >= 20000 ? 50 : 500);
    struct fa_stats s;
    snap(&s);
    uint64_t big = largest_class(&s);
    unsigned nbig = big >= 8 * MIB ? (unsigned)(128 * MIB / big) : 20;
    if (nbig < 2)
        nbig = 2;
    test_size_counts((size_t)big, nbig);
    test_size_counts((size_t)big + 1, nbig);
    test_size_counts((size_t)8 << 20, 4);
}

/* Many cycles of allocating and freeing must not make the counters drift or memory grow. */
static void test_no_drift(void)
{
    enum { N = 10000 };
    static void *v[N];
    struct fa_stats s0, s1, s2;
    unsigned rounds = 10 * fa_test_scale();
    fa_rng r;
    fa_rng_seed(&r, 3);
    snap(&s0);
    for (unsigned round = 0; round < rounds; round++) {
        for (int i = 0; i < N; i++) {
            v[i] = fa_malloc(fa_rng_logsize(&r, 2048));
            CHECK(v[i] != NULL);
        }
        for (int i = 0; i < N; i++)
            fa_free(v[(i * 7919) % N]);
        if (round == 0)
            snap(&s1);
    }
    snap(&s2);
    check_consistent(&s2);
    CHECK_EQ(s2.bytes_in_use, s0.bytes_in_use);
    CHECK_EQ(s2.allocs - s0.allocs, (uint64_t)N * rounds);
    CHECK_EQ(s2.frees - s0.frees, (uint64_t)N * rounds);
    /* the same working set reuses the same memory */
    CHECK_MSG(s2.committed <= s1.committed + 2 * MIB,
              "committed grew from %llu to %llu over %u identical rounds",
              (unsigned long long)s1.committed, (unsigned long long)s2.committed, rounds);
}

/* fa_collect hands freed memory back and keeps live blocks intact. */
static void test_collect(void)
{
    enum { KEEP = 64, N = 2048 };
    const size_t sz = 16384;
    static unsigned char *keep[KEEP], *v[N];
    struct fa_stats peak, after;
    for (int i = 0; i < KEEP; i++) {
        keep[i] = (unsigned char *)fa_malloc(100 + (size_t)i * 40);
        CHECK(keep[i] != NULL);
        fa_pattern_fill(keep[i], 100 + (size_t)i * 40, (uint64_t)i);
    }
    unsigned char *bigs[4];
    for (int i = 0; i < 4; i++) {
        bigs[i] = (unsigned char *)fa_malloc(8 * MIB);
        CHECK(bigs[i] != NULL);
        memset(bigs[i], 0x5A, 8 * MIB);
    }
    for (int i = 0; i < N; i++) {
        v[i] = (unsigned char *)fa_malloc(sz);
        CHECK(v[i] != NULL);
        memset(v[i], 0x33, sz);
    }
    snap(&peak);
    CHECK_GE(peak.committed, (uint64_t)N * sz + 32 * MIB);
    CHECK_GE(peak.peak_committed, peak.committed);
    for (int i = 0; i < N; i++)
        fa_free(v[i]);
    for (int i = 0; i < 4; i++)
        fa_free(bigs[i]);
    fa_collect();
    snap(&after);
    check_consistent(&after);
    /* 64 MiB were freed: at least 48 MiB of it must have left `committed` */
    CHECK_MSG(after.committed + 48 * MIB <= peak.committed,
              "committed %llu at peak, %llu after free+collect", (unsigned long long)peak.committed,
              (unsigned long long)after.committed);
    CHECK_GE(after.purged - peak.purged, 48 * MIB);
    CHECK_GE(after.peak_committed, peak.committed);
    for (int i = 0; i < KEEP; i++) {
        CHECK_PATTERN(keep[i], 100 + (size_t)i * 40, (uint64_t)i);
        fa_free(keep[i]);
    }
    /* still works after collecting */
    for (int i = 0; i < N; i++) {
        v[i] = (unsigned char *)fa_malloc(sz);
        CHECK(v[i] != NULL);
        fa_pattern_fill(v[i], sz, (uint64_t)i);
    }
    for (int i = 0; i < N; i++) {
        CHECK_PATTERN(v[i], sz, (uint64_t)i);
        fa_free(v[i]);
    }
    fa_collect();
}

static void test_print(void)
{
    char path[] = "/tmp/fitalloc-stats-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    unlink(path);
    fflush(stderr);
    int saved = dup(2);
    CHECK(saved >= 0);
    CHECK(dup2(fd, 2) == 2);
    struct fa_stats s;
    snap(&s);
    fa_stats_print();
    fflush(stderr);
    CHECK(dup2(saved, 2) == 2);
    close(saved);

    static char buf[1 << 16];
    ssize_t len = pread(fd, buf, sizeof buf - 1, 0);
    close(fd);
    CHECK(len > 0);
    buf[len] = 0;
    /* find a line "  allocs: <N>" */
    int found = 0;
    for (char *line = buf; line && *line;
         line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        char *q = line;
        while (*q == ' ' || *q == '\t')
            q++;
        if (strncmp(q, "allocs:", 7) == 0) {
            unsigned long long v = strtoull(q + 7, NULL, 10);
            CHECK_MSG(v >= s.allocs, "printed allocs %llu < snapshot %llu", v,
                      (unsigned long long)s.allocs);
            found = 1;
            break;
        }
    }
    CHECK_MSG(found, "no 'allocs:' line in fa_stats_print output:\n%s", buf);
    CHECK_MSG(strstr(buf, "frees:") != NULL, "no 'frees:' in output:\n%s", buf);
}

static void test_options(void)
{
    long long v = fa_option_get("purge_delay");
    CHECK_SGE(v, 0);
    CHECK_SEQ(fa_option_get("no_such_option"), -1);
    CHECK_SEQ(fa_option_get(""), -1);
    CHECK_SEQ(fa_option_get("purge_delay_x"), -1);
    CHECK_SEQ(fa_option_get("purge_dela"), -1);
    CHECK_SEQ(fa_option_get("purge_delay"), v); /* stable */
}

/* Counters are summed over threads: blocks allocated by another thread count. */
#define TN 2000
static void *thread_alloc(void *arg)
{
    void **v = (void **)arg;
    for (int i = 0; i < TN; i++) {
        v[i] = fa_malloc(1000);
        CHECK(v[i] != NULL);
    }
    return NULL;
}

static void test_threads_summed(void)
{
    static void *v[TN];
    struct fa_stats s0, s1, s2;
    snap(&s0);
    fa_test_on_thread(thread_alloc, v);
    snap(&s1);
    CHECK_GE(s1.allocs - s0.allocs, TN);
    CHECK_GE(s1.bytes_in_use - s0.bytes_in_use, (uint64_t)TN * 1000);
    CHECK_GE(s1.threads, s0.threads + 1);
    for (int i = 0; i < TN; i++)
        fa_free(v[i]);
    snap(&s2);
    CHECK_GE(s2.frees - s1.frees, TN);
    CHECK_LE(s2.bytes_in_use, s1.bytes_in_use - (uint64_t)TN * 1000);
}

int main(void)
{
    test_get_basic();
    test_options();
    test_counts();
    test_no_drift();
    test_collect();
    test_print();
    test_threads_summed();
    printf("engine/stats: ok\n");
    return 0;
}

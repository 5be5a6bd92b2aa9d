/* ctest labels: api */
/* API semantics of fa_malloc, fa_free, fa_malloc_usable_size, fa_free_sized. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fitalloc.h"

typedef struct {
    unsigned char *p;
    size_t n;
    size_t usable;
} blk;

static int cmp_blk_addr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const blk *)a)->p, y = (uintptr_t)((const blk *)b)->p;
    return x < y ? -1 : x > y;
}

/* Blocks (sorted copy) must not overlap, counting their whole usable size. */
static void check_no_overlap(const blk *b, size_t count)
{
    blk *s = (blk *)fa_malloc(count * sizeof *s);
    CHECK(s != NULL);
    memcpy(s, b, count * sizeof *s);
    qsort(s, count, sizeof *s, cmp_blk_addr);
    for (size_t i = 1; i < count; i++) {
        CHECK_MSG(s[i - 1].p != s[i].p, "pointer %p returned twice", (void *)s[i].p);
        CHECK_MSG((uintptr_t)s[i - 1].p + s[i - 1].usable <= (uintptr_t)s[i].p,
                  "block %p (usable %zu) overlaps block %p", (void *)s[i - 1].p, s[i - 1].usable,
                  (void *)s[i].p);
    }
    fa_free(s);
}

static unsigned char *alloc_checked(size_t n)
{
    errno = 0;
    unsigned char *p = (unsigned char *)fa_malloc(n);
    CHECK_MSG(p != NULL, "fa_malloc(%zu) failed, errno %d", n, errno);
    CHECK_ALIGNED(p, 16);
    CHECK_GE(fa_malloc_usable_size(p), n);
    return p;
}

/* malloc(0): unique, distinct, non-NULL, aligned pointers that can be freed. */
static void test_zero(void)
{
    enum { N = 1000 };
    blk b[N];
    for (int i = 0; i < N; i++) {
        b[i].p = alloc_checked(0);
        b[i].n = 0;
        b[i].usable = fa_malloc_usable_size(b[i].p);
    }
    /* distinct (and non-overlapping, even counting their usable bytes) */
    check_no_overlap(b, N);
    for (int i = 0; i < N; i++)
        memset(b[i].p, 0xA5, b[i].usable);
    for (int i = 0; i < N; i++)
        CHECK_BYTES(b[i].p, b[i].usable, 0xA5);
    for (int i = 0; i < N; i++)
        fa_free(b[i].p);
}

static void test_one(void)
{
    unsigned char *p = alloc_checked(1);
    *p = 0x5A;
    unsigned char *q = alloc_checked(1);
    *q = 0xA5;
    CHECK(p != q);
    CHECK_EQ(*p, 0x5A);
    CHECK_EQ(*q, 0xA5);
    fa_free(p);
    fa_free(q);
}

/* Every size 1..4096 live at the same time, each with its own pattern. */
static void test_every_size(void)
{
    enum { MAXN = 4096 };
    blk *b = (blk *)fa_malloc((MAXN + 1) * sizeof *b);
    CHECK(b != NULL);
    for (size_t n = 1; n <= MAXN; n++) {
        b[n].p = alloc_checked(n);
        b[n].n = n;
        b[n].usable = fa_malloc_usable_size(b[n].p);
        fa_pattern_fill(b[n].p, n, n);
    }
    for (size_t n = 1; n <= MAXN; n++)
        CHECK_PATTERN(b[n].p, n, n);
    check_no_overlap(b + 1, MAXN);
    /* free every other one, reallocate, check the rest survived */
    for (size_t n = 1; n <= MAXN; n += 2) {
        fa_free(b[n].p);
        b[n].p = alloc_checked(n);
        b[n].usable = fa_malloc_usable_size(b[n].p);
        fa_pattern_fill(b[n].p, n, n + 100000);
    }
    for (size_t n = 1; n <= MAXN; n++)
        CHECK_PATTERN(b[n].p, n, (n & 1) ? n + 100000 : n);
    check_no_overlap(b + 1, MAXN);
    for (size_t n = MAXN; n >= 1; n--)
        fa_free(b[n].p);
    fa_free(b);
}

/* Sizes around size-class boundaries: 2^e and k*2^e/8, each -1, +0, +1, up to 1 MiB. */
static size_t boundary_sizes(size_t *out, size_t cap)
{
    size_t count = 0;
    for (unsigned e = 0; e <= 20; e++) {
        for (unsigned k = 1; k <= 8; k++) {
            size_t s;
            if (e < 3) {
                if (k != 8)
                    continue;
                s = (size_t)1 << e;
            } else {
                s = ((size_t)k << e) / 8;
            }
            for (int d = -1; d <= 1; d++) {
                CHECK(count < cap);
                out[count++] = s + (size_t)d;
            }
        }
    }
    return count;
}

static void test_class_boundaries(void)
{
    static size_t sizes[1024];
    size_t count = boundary_sizes(sizes, 1024);
    blk *b = (blk *)fa_malloc(count * sizeof *b);
    CHECK(b != NULL);
    for (size_t i = 0; i < count; i++) {
        b[i].p = alloc_checked(sizes[i]);
        b[i].n = sizes[i];
        b[i].usable = fa_malloc_usable_size(b[i].p);
        fa_pattern_fill(b[i].p, b[i].n, i * 7919 + 1);
    }
    for (size_t i = 0; i < count; i++)
        CHECK_PATTERN(b[i].p, b[i].n, i * 7919 + 1);
    check_no_overlap(b, count);

    /* Writing the whole usable size must be safe: fill every block completely
     * with its own byte, then check that every block is intact. */
    for (size_t i = 0; i < count; i++)
        memset(b[i].p, (int)(i & 0xff), b[i].usable);
    for (size_t i = 0; i < count; i++)
        CHECK_BYTES(b[i].p, b[i].usable, i & 0xff);

    /* free in an interleaved order, then allocate again and recheck */
    for (size_t i = 0; i < count; i += 3)
        fa_free(b[i].p);
    for (size_t i = 0; i < count; i += 3) {
        b[i].p = alloc_checked(b[i].n);
        b[i].usable = fa_malloc_usable_size(b[i].p);
        memset(b[i].p, (int)(i & 0xff), b[i].usable);
    }
    for (size_t i = 0; i < count; i++)
        CHECK_BYTES(b[i].p, b[i].usable, i & 0xff);
    check_no_overlap(b, count);
    for (size_t i = 0; i < count; i++)
        fa_free(b[i].p);
    fa_free(b);
}

static void test_huge(void)
{
    /* 64 MiB: fully writable */
    size_t n = (size_t)64 << 20;
    unsigned char *p = alloc_checked(n);
    memset(p, 0x3C, n);
    unsigned char *small = alloc_checked(100);
    memset(small, 0x11, 100);
    CHECK_BYTES(p, n, 0x3C);
    CHECK(small + 100 <= p || small >= p + fa_malloc_usable_size(p));
    fa_free(p);
    CHECK_BYTES(small, 100, 0x11);
    fa_free(small);

    /* 1 GiB: first and last byte (and one per 64 MiB) writable */
    n = (size_t)1 << 30;
    p = alloc_checked(n);
    for (size_t off = 0; off < n; off += (size_t)64 << 20)
        p[off] = (unsigned char)(off >> 26);
    p[n - 1] = 0xEE;
    for (size_t off = 0; off < n; off += (size_t)64 << 20)
        CHECK_EQ(p[off], (unsigned char)(off >> 26));
    CHECK_EQ(p[n - 1], 0xEE);
    fa_free(p);

    /* a few big odd sizes */
    static const size_t odd[] = {(1u << 20) + 1, (2u << 20) - 1, (4u << 20) + 4097,
                                 (16u << 20) + 3};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
        p = alloc_checked(odd[i]);
        fa_pattern_fill(p, odd[i], i);
        CHECK_PATTERN(p, odd[i], i);
        p[fa_malloc_usable_size(p) - 1] = 1;
        fa_free(p);
    }
}

static void test_impossible(void)
{
    static const size_t bad[] = {
        SIZE_MAX,
        SIZE_MAX - 1,
        SIZE_MAX - 15,
        SIZE_MAX - 4095,
        SIZE_MAX / 2,
        (size_t)PTRDIFF_MAX + 1,
        (size_t)PTRDIFF_MAX,
        (size_t)1 << 62,
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        errno = 0;
        void *p = fa_malloc(bad[i]);
        CHECK_MSG(p == NULL, "fa_malloc(%zu) returned %p", bad[i], p);
        CHECK_EQ(errno, ENOMEM);
    }
    /* the allocator still works afterwards */
    void *p = alloc_checked(32);
    fa_free(p);
}

static void test_null(void)
{
    CHECK_EQ(fa_malloc_usable_size(NULL), 0);
    errno = 1234;
    fa_free(NULL);
    fa_free(NULL);
    fa_free_sized(NULL, 0);
    fa_free_sized(NULL, 100);
    fa_free_aligned_sized(NULL, 64, 0);
    CHECK_EQ(errno, 1234); /* a no-op does not touch errno */
}

static void test_free_sized(void)
{
    static size_t sizes[1024];
    size_t count = boundary_sizes(sizes, 1024 - 3);
    sizes[count++] = (size_t)4 << 20;
    sizes[count++] = ((size_t)8 << 20) + 1;
    sizes[count++] = 0;
    blk *b = (blk *)fa_malloc(count * sizeof *b);
    CHECK(b != NULL);

    struct fa_stats s0, s1;
    s0.size = sizeof s0;
    s1.size = sizeof s1;
    for (size_t i = 0; i < count; i++) {
        b[i].p = alloc_checked(sizes[i]);
        b[i].n = sizes[i];
        fa_pattern_fill(b[i].p, b[i].n, i);
    }
    CHECK_EQ(fa_stats_get(&s0), 0);
    for (size_t i = 0; i < count; i++) {
        CHECK_PATTERN(b[i].p, b[i].n, i);
        fa_free_sized(b[i].p, b[i].n);
    }
    CHECK_EQ(fa_stats_get(&s1), 0);
    CHECK_GE(s1.frees - s0.frees, count);
    CHECK_LE(s1.bytes_in_use, s0.bytes_in_use);

    /* memory freed with free_sized is usable again */
    for (size_t i = 0; i < count; i++) {
        b[i].p = alloc_checked(sizes[i]);
        b[i].usable = fa_malloc_usable_size(b[i].p);
        fa_pattern_fill(b[i].p, b[i].n, i + 5000);
    }
    check_no_overlap(b, count);
    for (size_t i = 0; i < count; i++) {
        CHECK_PATTERN(b[i].p, b[i].n, i + 5000);
        fa_free_sized(b[i].p, b[i].n);
    }
    fa_free(b);
}

/* Heavy churn on one size must not lose blocks or corrupt live neighbours. */
static void test_churn(void)
{
    enum { LIVE = 256 };
    unsigned scale = fa_test_scale();
    blk b[LIVE];
    fa_rng r;
    fa_rng_seed(&r, 42);
    for (int i = 0; i < LIVE; i++) {
        b[i].n = fa_rng_logsize(&r, 2048);
        b[i].p = alloc_checked(b[i].n);
        fa_pattern_fill(b[i].p, b[i].n, (uint64_t)(uintptr_t)b[i].p);
    }
    for (unsigned it = 0; it < 200000u * scale; it++) {
        int i = (int)fa_rng_below(&r, LIVE);
        CHECK_PATTERN(b[i].p, b[i].n, (uint64_t)(uintptr_t)b[i].p);
        fa_free(b[i].p);
        b[i].n = fa_rng_logsize(&r, 2048);
        b[i].p = alloc_checked(b[i].n);
        fa_pattern_fill(b[i].p, b[i].n, (uint64_t)(uintptr_t)b[i].p);
    }
    for (int i = 0; i < LIVE; i++) {
        CHECK_PATTERN(b[i].p, b[i].n, (uint64_t)(uintptr_t)b[i].p);
        fa_free(b[i].p);
    }
}

int main(void)
{
    test_null();
    test_zero();
    test_one();
    test_every_size();
    test_class_boundaries();
    test_huge();
    test_impossible();
    test_free_sized();
    test_churn();
    printf("engine/malloc: ok\n");
    return 0;
}

/* ctest labels: api */
/* API semantics of fa_calloc, fa_realloc and fa_reallocarray. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fitalloc.h"

static const size_t k_sizes[] = {
    0,       1,       2,       7,       8,       9,       15,     16,     17,     24,     31,
    32,      33,      48,      63,      64,      65,      96,     100,    127,    128,    129,
    200,     255,     256,     257,     384,     511,     512,    513,    768,    1000,   1023,
    1024,    1025,    1536,    2047,    2048,    2049,    3000,   4095,   4096,   4097,   6000,
    8191,    8192,    8193,    12288,   16383,   16384,   16385,  32767,  32768,  32769,  65535,
    65536,   65537,   100000,  131071,  131072,  131073,  262144, 262145, 524287, 524288, 524289,
    1048575, 1048576, 1048577, 2097152, 3000000, 4194305,
};
#define NSIZES (sizeof k_sizes / sizeof k_sizes[0])

static void test_calloc_zeroed(void)
{
    for (size_t i = 0; i < NSIZES; i++) {
        size_t n = k_sizes[i];
        errno = 0;
        unsigned char *p = (unsigned char *)fa_calloc(1, n);
        CHECK_MSG(p != NULL, "fa_calloc(1, %zu) failed errno %d", n, errno);
        CHECK_ALIGNED(p, 16);
        CHECK_GE(fa_malloc_usable_size(p), n);
        CHECK_BYTES(p, n, 0);
        fa_free(p);
        /* count*size split */
        if (n >= 4 && n % 4 == 0) {
            p = (unsigned char *)fa_calloc(n / 4, 4);
            CHECK(p != NULL);
            CHECK_BYTES(p, n, 0);
            fa_free(p);
        }
    }
    /* zero-sized calloc: unique non-NULL pointers */
    void *a = fa_calloc(0, 16), *b = fa_calloc(16, 0), *c = fa_calloc(0, 0);
    CHECK(a != NULL && b != NULL && c != NULL);
    CHECK(a != b && b != c && a != c);
    fa_free(a);
    fa_free(b);
    fa_free(c);

    /* big calloc: 64 MiB all zero */
    size_t big = (size_t)64 << 20;
    unsigned char *p = (unsigned char *)fa_calloc(big / 16, 16);
    CHECK(p != NULL);
    CHECK_BYTES(p, big, 0);
    fa_free(p);
}

/* calloc must zero memory that was used and dirtied before. */
static void test_calloc_reuse(void)
{
    unsigned scale = fa_test_scale();
    for (size_t i = 0; i < NSIZES; i++) {
        size_t n = k_sizes[i];
        unsigned rounds = n <= 65536 ? 40 * scale : 4 * scale;
        for (unsigned r = 0; r < rounds; r++) {
            unsigned char *d = (unsigned char *)fa_malloc(n);
            CHECK(d != NULL);
            memset(d, 0xff, fa_malloc_usable_size(d));
            fa_free(d);
            unsigned char *z = (unsigned char *)fa_calloc(n, 1);
            CHECK(z != NULL);
            CHECK_BYTES(z, n, 0);
            fa_free(z);
        }
    }
    /* many dirty blocks freed at once, then many callocs of the same sizes */
    enum { M = 512 };
    static unsigned char *blocks[M];
    fa_rng r;
    fa_rng_seed(&r, 7);
    for (unsigned round = 0; round < 4 * scale; round++) {
        size_t n = fa_rng_logsize(&r, 8192);
        for (int i = 0; i < M; i++) {
            blocks[i] = (unsigned char *)fa_malloc(n);
            CHECK(blocks[i] != NULL);
            memset(blocks[i], 0xff, fa_malloc_usable_size(blocks[i]));
        }
        for (int i = 0; i < M; i++)
            fa_free(blocks[i]);
        for (int i = 0; i < M; i++) {
            blocks[i] = (unsigned char *)fa_calloc(1, n);
            CHECK(blocks[i] != NULL);
            CHECK_BYTES(blocks[i], n, 0);
            memset(blocks[i], 0xff, n);
        }
        for (int i = 0; i < M; i++)
            fa_free(blocks[i]);
    }
}

static void test_calloc_overflow(void)
{
    static const size_t bad[][2] = {
        {SIZE_MAX / 2, 3},     {3, SIZE_MAX / 2},
        {SIZE_MAX, SIZE_MAX},  {(size_t)1 << 32, (size_t)1 << 32},
        {SIZE_MAX, 2},         {1, SIZE_MAX},
        {SIZE_MAX / 2 + 1, 1},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        errno = 0;
        void *p = fa_calloc(bad[i][0], bad[i][1]);
        CHECK_MSG(p == NULL, "fa_calloc(%zu, %zu) returned %p", bad[i][0], bad[i][1], p);
        CHECK_EQ(errno, ENOMEM);
    }
}

/* Walk through sizes growing and shrinking; contents must survive. */
static void realloc_walk(const size_t *seq, size_t len, uint64_t id)
{
    unsigned char *p = NULL;
    size_t cur = 0;
    for (size_t i = 0; i < len; i++) {
        size_t n = seq[i];
        unsigned char *q = (unsigned char *)fa_realloc(p, n);
        if (n == 0 && q == NULL) { /* realloc(p, 0) may free */
            p = NULL;
            cur = 0;
            continue;
        }
        CHECK_MSG(q != NULL, "fa_realloc(%p, %zu) failed", (void *)p, n);
        CHECK_ALIGNED(q, 16);
        CHECK_GE(fa_malloc_usable_size(q), n);
        CHECK_PATTERN(q, cur < n ? cur : n, id);
        fa_pattern_fill(q, n, id);
        p = q;
        cur = n;
    }
    CHECK_PATTERN(p, cur, id);
    fa_free(p);
}

static void test_realloc_contents(void)
{
    /* up through all sizes, then down */
    size_t seq[2 * NSIZES];
    size_t len = 0;
    for (size_t i = 1; i < NSIZES; i++)
        seq[len++] = k_sizes[i];
    for (size_t i = NSIZES - 1; i >= 1; i--)
        seq[len++] = k_sizes[i];
    realloc_walk(seq, len, 1);

    /* small -> huge -> small, and jumps between distant sizes */
    static const size_t jumps[] = {
        10,
        (size_t)64 << 20,
        10,
        5000,
        (size_t)16 << 20,
        100,
        1 << 20,
        1,
        (size_t)3 << 20,
        (size_t)2 << 20,
        (size_t)2 << 20 | 1,
        70000,
        70001,
        16,
    };
    realloc_walk(jumps, sizeof jumps / sizeof jumps[0], 2);

    /* random walks, several blocks live at once */
    fa_rng r;
    fa_rng_seed(&r, 99);
    unsigned scale = fa_test_scale();
    enum { LIVE = 32 };
    unsigned char *p[LIVE] = {0};
    size_t n[LIVE] = {0};
    for (unsigned it = 0; it < 20000 * scale; it++) {
        int i = (int)fa_rng_below(&r, LIVE);
        size_t nn = fa_rng_logsize(&r, (fa_rng_below(&r, 16) == 0) ? (1u << 21) : 4096);
        if (p[i] != NULL)
            CHECK_PATTERN(p[i], n[i], (uint64_t)i + 1000);
        unsigned char *q = (unsigned char *)fa_realloc(p[i], nn);
        CHECK(q != NULL);
        CHECK_PATTERN(q, n[i] < nn ? n[i] : nn, (uint64_t)i + 1000);
        fa_pattern_fill(q, nn, (uint64_t)i + 1000);
        p[i] = q;
        n[i] = nn;
    }
    for (int i = 0; i < LIVE; i++) {
        CHECK_PATTERN(p[i], n[i], (uint64_t)i + 1000);
        fa_free(p[i]);
    }

    /* same-size and usable-size realloc keep contents */
    unsigned char *a = (unsigned char *)fa_malloc(100);
    CHECK(a != NULL);
    fa_pattern_fill(a, 100, 5);
    a = (unsigned char *)fa_realloc(a, 100);
    CHECK(a != NULL);
    CHECK_PATTERN(a, 100, 5);
    size_t u = fa_malloc_usable_size(a);
    fa_pattern_fill(a, u, 6);
    a = (unsigned char *)fa_realloc(a, u);
    CHECK(a != NULL);
    CHECK_PATTERN(a, u, 6);
    fa_free(a);
}

static void test_realloc_edge(void)
{
    /* realloc(NULL, n) acts like malloc */
    for (size_t i = 0; i < NSIZES; i++) {
        unsigned char *p = (unsigned char *)fa_realloc(NULL, k_sizes[i]);
        CHECK(p != NULL);
        CHECK_ALIGNED(p, 16);
        CHECK_GE(fa_malloc_usable_size(p), k_sizes[i]);
        memset(p, 0x77, k_sizes[i]);
        fa_free(p);
    }
    /* realloc(p, 0): frees; returns NULL or a pointer that can be freed */
    static const size_t before[] = {1, 64, 5000, 1 << 20, (size_t)8 << 20};
    for (size_t i = 0; i < sizeof before / sizeof before[0]; i++) {
        void *p = fa_malloc(before[i]);
        CHECK(p != NULL);
        memset(p, 1, before[i]);
        void *q = fa_realloc(p, 0);
        if (q != NULL) {
            CHECK_ALIGNED(q, 16);
            fa_free(q);
        }
    }
    /* impossible size: NULL + ENOMEM and the old block intact */
    static const size_t bad[] = {SIZE_MAX, SIZE_MAX / 2, (size_t)PTRDIFF_MAX + 1, SIZE_MAX - 15};
    static const size_t olds[] = {50, 4000, (size_t)2 << 20};
    for (size_t j = 0; j < sizeof olds / sizeof olds[0]; j++) {
        unsigned char *p = (unsigned char *)fa_malloc(olds[j]);
        CHECK(p != NULL);
        fa_pattern_fill(p, olds[j], 77 + j);
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            errno = 0;
            void *q = fa_realloc(p, bad[i]);
            CHECK_MSG(q == NULL, "fa_realloc(p, %zu) returned %p", bad[i], q);
            CHECK_EQ(errno, ENOMEM);
            CHECK_PATTERN(p, olds[j], 77 + j);
            CHECK_GE(fa_malloc_usable_size(p), olds[j]);
        }
        p = (unsigned char *)fa_realloc(p, olds[j] * 2);
        CHECK(p != NULL);
        CHECK_PATTERN(p, olds[j], 77 + j);
        fa_free(p);
    }
}

static void test_reallocarray(void)
{
    unsigned char *p = (unsigned char *)fa_reallocarray(NULL, 4, 8);
    CHECK(p != NULL);
    CHECK_GE(fa_malloc_usable_size(p), 32);
    fa_pattern_fill(p, 32, 3);
    p = (unsigned char *)fa_reallocarray(p, 10, 100);
    CHECK(p != NULL);
    CHECK_GE(fa_malloc_usable_size(p), 1000);
    CHECK_PATTERN(p, 32, 3);
    fa_pattern_fill(p, 1000, 4);
    p = (unsigned char *)fa_reallocarray(p, 1000, 1000);
    CHECK(p != NULL);
    CHECK_GE(fa_malloc_usable_size(p), 1000000);
    CHECK_PATTERN(p, 1000, 4);
    fa_pattern_fill(p, 1000000, 5);

    static const size_t bad[][2] = {
        {SIZE_MAX / 2, 3},
        {3, SIZE_MAX / 2},
        {SIZE_MAX, SIZE_MAX},
        {(size_t)1 << 33, (size_t)1 << 31},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        errno = 0;
        void *q = fa_reallocarray(p, bad[i][0], bad[i][1]);
        CHECK_MSG(q == NULL, "fa_reallocarray(p, %zu, %zu) returned %p", bad[i][0], bad[i][1], q);
        CHECK_EQ(errno, ENOMEM);
        CHECK_PATTERN(p, 1000000, 5);
    }
    /* overflow with NULL too */
    errno = 0;
    CHECK(fa_reallocarray(NULL, SIZE_MAX / 2, 3) == NULL);
    CHECK_EQ(errno, ENOMEM);

    p = (unsigned char *)fa_reallocarray(p, 10, 10);
    CHECK(p != NULL);
    CHECK_PATTERN(p, 100, 5);
    fa_free(p);
}

/* A large block freed dirty and taken again by calloc, at the same size, smaller (the mapping
 * kept whole or trimmed) and larger (the mapping grown, its old part cleared and its new part
 * fresh): every byte asked for reads zero. */
static void test_calloc_large_reuse(void)
{
    static const size_t mib = (size_t)1 << 20;
    static const size_t sizes[][2] = {{3 * mib, 3 * mib},
                                      {6 * mib, 2 * mib + 4097},
                                      {2 * mib + 100, 7 * mib + 1},
                                      {mib, 9 * mib}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        unsigned char *d = (unsigned char *)fa_malloc(sizes[i][0]);
        CHECK(d != NULL);
        memset(d, 0xa5, fa_malloc_usable_size(d));
        fa_free(d);
        unsigned char *z = (unsigned char *)fa_calloc(1, sizes[i][1]);
        CHECK(z != NULL);
        CHECK_BYTES(z, sizes[i][1], 0);
        fa_free(z);
    }
}

int main(void)
{
    test_calloc_zeroed();
    test_calloc_reuse();
    test_calloc_large_reuse();
    test_calloc_overflow();
    test_realloc_contents();
    test_realloc_edge();
    test_reallocarray();
    printf("engine/calloc_realloc: ok\n");
    return 0;
}

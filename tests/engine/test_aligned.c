/* ctest labels: api */
/* API semantics of fa_aligned_alloc, fa_posix_memalign, fa_memalign, fa_valloc,
 * fa_pvalloc and fa_free_aligned_sized. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fitalloc.h"

#define MAX_LIVE 4096

typedef struct {
    unsigned char *p;
    size_t n;
    size_t align;
    size_t usable;
    int from_aligned_alloc;
} blk;

static blk live[MAX_LIVE];
static size_t nlive;

static void track_kind(void *p, size_t n, size_t align, int from_aligned_alloc)
{
    CHECK(nlive < MAX_LIVE);
    live[nlive].from_aligned_alloc = from_aligned_alloc;
    live[nlive].p = (unsigned char *)p;
    live[nlive].n = n;
    live[nlive].align = align;
    live[nlive].usable = fa_malloc_usable_size(p);
    CHECK_GE(live[nlive].usable, n);
    fa_pattern_fill(p, n, nlive + 1);
    nlive++;
}

static void track(void *p, size_t n, size_t align)
{
    track_kind(p, n, align, 0);
}

static int cmp_addr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const blk *)a)->p, y = (uintptr_t)((const blk *)b)->p;
    return x < y ? -1 : x > y;
}

/* Check patterns, then write every usable byte, check no overlap, free all
 * (with fa_free, or with fa_free_aligned_sized / fa_free_sized when `sized`). */
static void verify_and_free_all(int sized)
{
    for (size_t i = 0; i < nlive; i++) {
        CHECK_PATTERN(live[i].p, live[i].n, i + 1);
        CHECK_ALIGNED(live[i].p, live[i].align);
    }
    for (size_t i = 0; i < nlive; i++)
        memset(live[i].p, (int)(i * 13 & 0xff), live[i].usable);
    for (size_t i = 0; i < nlive; i++)
        CHECK_BYTES(live[i].p, live[i].usable, i * 13 & 0xff);
    qsort(live, nlive, sizeof live[0], cmp_addr);
    for (size_t i = 1; i < nlive; i++)
        CHECK_MSG((uintptr_t)live[i - 1].p + live[i - 1].usable <= (uintptr_t)live[i].p,
                  "block %p (usable %zu) overlaps %p", (void *)live[i - 1].p, live[i - 1].usable,
                  (void *)live[i].p);
    for (size_t i = 0; i < nlive; i++) {
        if (sized && live[i].from_aligned_alloc)
            fa_free_aligned_sized(live[i].p, live[i].align, live[i].n);
        else if (sized)
            fa_free_sized(live[i].p, live[i].n);
        else
            fa_free(live[i].p);
    }
    nlive = 0;
}

static void sizes_for(size_t a, size_t out[6])
{
    out[0] = 0;
    out[1] = 1;
    out[2] = a;         /* multiple of the alignment */
    out[3] = a + 1;     /* not a multiple */
    out[4] = 3 * a + 5; /* odd */
    out[5] = a > 1 ? a - 1 : 7;
}

static void test_aligned_alloc(void)
{
    for (int round = 0; round < 2; round++) {
        for (size_t a = 1; a <= ((size_t)4 << 20); a *= 2) {
            size_t sz[6];
            sizes_for(a, sz);
            for (int k = 0; k < 6; k++) {
                errno = 0;
                void *p = fa_aligned_alloc(a, sz[k]);
                CHECK_MSG(p != NULL, "fa_aligned_alloc(%zu, %zu) failed errno %d", a, sz[k], errno);
                CHECK_ALIGNED(p, a);
                track_kind(p, sz[k], a, 1);
                /* interleave ordinary small blocks */
                void *s = fa_malloc(24 + (size_t)k * 8);
                CHECK(s != NULL);
                track(s, 24 + (size_t)k * 8, 16);
            }
        }
        /* round 0 frees with fa_free, round 1 with fa_free_aligned_sized */
        if (round == 0) {
            verify_and_free_all(0);
        } else {
            struct fa_stats s0, s1;
            s0.size = s1.size = sizeof s0;
            size_t count = nlive;
            CHECK_EQ(fa_stats_get(&s0), 0);
            verify_and_free_all(1);
            CHECK_EQ(fa_stats_get(&s1), 0);
            CHECK_GE(s1.frees - s0.frees, count);
        }
    }

    /* bad alignments: NULL + EINVAL */
    static const size_t bad[] = {3, 0, 24, 48, 6, 100, 4097, ((size_t)1 << 20) + 1, SIZE_MAX};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        errno = 0;
        void *p = fa_aligned_alloc(bad[i], 8);
        CHECK_MSG(p == NULL, "fa_aligned_alloc(%zu, 8) returned %p", bad[i], p);
        CHECK_EQ(errno, EINVAL);
    }
    /* impossible sizes: NULL + ENOMEM */
    static const size_t big[] = {SIZE_MAX, SIZE_MAX - 100, SIZE_MAX / 2, (size_t)PTRDIFF_MAX + 1};
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
        errno = 0;
        void *p = fa_aligned_alloc(64, big[i]);
        CHECK_MSG(p == NULL, "fa_aligned_alloc(64, %zu) returned %p", big[i], p);
        CHECK_EQ(errno, ENOMEM);
        errno = 0;
        p = fa_aligned_alloc(1 << 20, big[i]);
        CHECK(p == NULL);
        CHECK_EQ(errno, ENOMEM);
    }
    /* an alignment that cannot be satisfied */
    CHECK(fa_aligned_alloc((size_t)1 << 63, 1) == NULL);
}

static void test_posix_memalign(void)
{
    void *const sentinel = (void *)(uintptr_t)0xDEADBEE0;
    for (size_t a = 8; a <= ((size_t)1 << 20); a *= 2) {
        size_t sz[6];
        sizes_for(a, sz);
        for (int k = 0; k < 6; k++) {
            void *p = sentinel;
            errno = 4321;
            int rc = fa_posix_memalign(&p, a, sz[k]);
            CHECK_MSG(rc == 0, "fa_posix_memalign(%zu, %zu) = %d", a, sz[k], rc);
            CHECK_EQ(errno, 4321);
            CHECK(p != sentinel && p != NULL);
            CHECK_ALIGNED(p, a);
            track(p, sz[k], a);
        }
    }
    verify_and_free_all(0);

    /* bad alignments: EINVAL, *out and errno untouched */
    static const size_t bad[] = {0, 1, 2, 3, 4, 12, 24, 48, 100, 4097, SIZE_MAX};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        void *p = sentinel;
        errno = 4321;
        int rc = fa_posix_memalign(&p, bad[i], 16);
        CHECK_MSG(rc == EINVAL, "fa_posix_memalign(alignment %zu) = %d", bad[i], rc);
        CHECK(p == sentinel);
        CHECK_EQ(errno, 4321);
    }
    /* huge sizes: ENOMEM, *out and errno untouched */
    static const size_t big[] = {SIZE_MAX, SIZE_MAX - 100, SIZE_MAX / 2, (size_t)PTRDIFF_MAX + 1};
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
        void *p = sentinel;
        errno = 4321;
        int rc = fa_posix_memalign(&p, 64, big[i]);
        CHECK_MSG(rc == ENOMEM, "fa_posix_memalign(64, %zu) = %d", big[i], rc);
        CHECK(p == sentinel);
        CHECK_EQ(errno, 4321);
    }
}

static void test_memalign(void)
{
    /* non-power-of-two alignments are rounded up to the next power of two */
    static const size_t al[][2] = {
        {48, 64},     {3, 4},          {5, 8},
        {24, 32},     {100, 128},      {1000, 1024},
        {4097, 8192}, {65537, 131072}, {(1 << 20) - 1, 1 << 20},
    };
    for (size_t i = 0; i < sizeof al / sizeof al[0]; i++) {
        size_t ns[] = {1, 48, 1000, 100000};
        for (size_t k = 0; k < 4; k++) {
            void *p = fa_memalign(al[i][0], ns[k]);
            CHECK_MSG(p != NULL, "fa_memalign(%zu, %zu) failed", al[i][0], ns[k]);
            CHECK_MSG(((uintptr_t)p & (al[i][1] - 1)) == 0,
                      "fa_memalign(%zu, %zu) = %p not aligned to %zu", al[i][0], ns[k], p,
                      al[i][1]);
            track(p, ns[k], al[i][1]);
        }
    }
    for (size_t a = 1; a <= ((size_t)1 << 20); a *= 4) {
        void *p = fa_memalign(a, 3 * a + 1);
        CHECK(p != NULL);
        CHECK_ALIGNED(p, a);
        track(p, 3 * a + 1, a);
    }
    verify_and_free_all(0);
    errno = 0;
    CHECK(fa_memalign(64, SIZE_MAX - 100) == NULL);
    CHECK_EQ(errno, ENOMEM);
}

static void test_valloc_pvalloc(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    static const size_t ns[] = {0,    1,    100,   4095,          4096,
                                4097, 8191, 65536, (1 << 20) + 1, (size_t)10 << 20};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        void *p = fa_valloc(ns[i]);
        CHECK_MSG(p != NULL, "fa_valloc(%zu) failed", ns[i]);
        CHECK_ALIGNED(p, page);
        track(p, ns[i], page);

        void *q = fa_pvalloc(ns[i]);
        CHECK_MSG(q != NULL, "fa_pvalloc(%zu) failed", ns[i]);
        CHECK_ALIGNED(q, page);
        size_t rounded = ns[i] == 0 ? page : (ns[i] + page - 1) / page * page;
        CHECK_MSG(fa_malloc_usable_size(q) >= rounded, "pvalloc(%zu): usable %zu < %zu", ns[i],
                  fa_malloc_usable_size(q), rounded);
        /* the whole rounded size is the caller's */
        track(q, rounded, page);
    }
    verify_and_free_all(0);
    errno = 0;
    CHECK(fa_valloc(SIZE_MAX - 100) == NULL);
    CHECK_EQ(errno, ENOMEM);
    errno = 0;
    CHECK(fa_pvalloc(SIZE_MAX - 100) == NULL);
    CHECK_EQ(errno, ENOMEM);
}

/* Zero bytes at alignments from 4 MiB up: the block must still lie inside its own mapping (it
 * once started where the mapping ended: the next 4 MiB chunk, perhaps another segment's). */
static void test_zero_size_huge_alignment(void)
{
    for (size_t a = (size_t)4 << 20; a <= ((size_t)64 << 20); a *= 2) {
        void *p = fa_aligned_alloc(a, 0);
        CHECK_MSG(p != NULL, "fa_aligned_alloc(%zu, 0) failed", a);
        CHECK_ALIGNED(p, a);
        CHECK_MSG(fa_malloc_usable_size(p) >= 1, "aligned_alloc(%zu, 0): usable %zu", a,
                  fa_malloc_usable_size(p));
        *(volatile char *)p = 1; /* inside the mapping: no fault */
        void *q = NULL;
        CHECK_EQ(fa_posix_memalign(&q, a, 0), 0);
        CHECK(fa_malloc_usable_size(q) >= 1);
        fa_free(p);
        fa_free(q);
    }
    /* The segment map is intact: a medium block is still recognised after all that. */
    void *m = fa_malloc(50000);
    CHECK(m != NULL && fa_malloc_usable_size(m) >= 50000);
    fa_free(m);
}

int main(void)
{
    test_zero_size_huge_alignment();
    test_aligned_alloc();
    test_posix_memalign();
    test_memalign();
    test_valloc_pvalloc();
    printf("engine/aligned: ok\n");
    return 0;
}

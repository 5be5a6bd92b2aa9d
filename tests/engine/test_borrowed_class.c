/* ctest labels: threads */
/* Borrowed classes (heap.c): a new thread that allocates a few blocks in each of many small
 * classes takes a page per power-of-two class, not one per class, as the classes in between
 * borrow the head page of the power-of-two class above them; a class in real use ends its
 * borrow and opens a page of its own.
 *
 * A worker churns blocks of 8 to 512 bytes one at a time (CS33's test 1): its heap then holds 6
 * pages (16, 32, 64, 128, 256 and 512 bytes) where it held 24, and a 48-byte block is a 64-byte
 * one. Then it keeps 3,000 blocks of 48 bytes: once the 64-byte page has no free block for
 * them, 48 bytes get their own page; every block keeps its contents, the 64-byte page's and the
 * 48-byte page's alike, and all are freed. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fitalloc-stats.h"
#include "fitalloc.h"

#define KEPT 3000

struct pages {
    int mine;
    size_t block_size[64];
    size_t used; /* blocks in use in its 48- and 64-byte pages */
};

static void count_mine(const struct fa_heap_area *a, void *arg)
{
    struct pages *p = arg;
    if (a->kind != FA_AREA_PAGE || !a->mine)
        return;
    if (p->mine < 64)
        p->block_size[p->mine++] = a->block_size;
    /* Only these two: starting the purge thread (the frees below) allocates in other classes. */
    if (a->block_size == 48 || a->block_size == 64)
        p->used += a->used;
}

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 64 * 100; i++) {
        size_t n = 8 * (size_t)(i % 64 + 1);
        unsigned char *p = fa_malloc(n);
        CHECK(p != NULL);
        memset(p, i, n);
        fa_free(p);
    }
    struct pages seen = {0};
    CHECK(fa_heap_visit(count_mine, &seen) > 0);
    CHECK_EQ(seen.mine, 6);
    for (int i = 0; i < seen.mine; i++) /* powers of two only */
        CHECK_EQ(seen.block_size[i] & (seen.block_size[i] - 1), 0);

    static unsigned char *kept[KEPT];
    size_t borrowed = 0, own = 0;
    for (int i = 0; i < KEPT; i++) {
        kept[i] = fa_malloc(48);
        CHECK(kept[i] != NULL);
        size_t usable = fa_malloc_usable_size(kept[i]);
        CHECK(usable == 48 || usable == 64);
        borrowed += usable == 64;
        own += usable == 48;
        memset(kept[i], i & 0xff, 48);
    }
    CHECK(borrowed > 0 && own > KEPT / 2); /* it borrowed, then opened its own page */
    CHECK_EQ(fa_malloc_usable_size(kept[KEPT - 1]), 48);
    for (int i = 0; i < KEPT; i++) {
        for (int k = 0; k < 48; k++)
            CHECK_EQ(kept[i][k], (unsigned char)(i & 0xff));
        fa_free(kept[i]);
    }
    struct pages left = {0};
    CHECK(fa_heap_visit(count_mine, &left) > 0);
    CHECK_EQ(left.used, 0);
    return NULL;
}

int main(void)
{
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, worker, NULL), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
    printf("ok\n");
    return 0;
}

/* ctest labels: reliability */
/* A large calloc faults its fresh pages in at once only after the program has shown that it
 * uses such blocks whole, and stops after one it used little (engine/large_populate.c):
 *   1. the first 8 MiB calloc is left to the first touch (few pages resident);
 *   2. after that block was written whole and freed, the next ones are resident at once and
 *      read as zero, but for the 8th, left alone to keep watching;
 *   3. after that one was freed with one page touched, the next ones are left alone again;
 *   4. a block left alone and written whole teaches it before its free: the next calloc,
 *      made while that one lives, is populated again.
 * With FITALLOC_CALLOC_POPULATE=0, every block is left alone. The test runs itself
 * under each value, without the large-block cache (so that every block is a fresh mapping).
 * Skipped (77) on a kernel without MADV_POPULATE_WRITE (before Linux 5.14). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "rerun.h"
#include "rss.h"
#include "fitalloc.h"

#define SIZE ((size_t)8 << 20)
#define PAGE ((size_t)4096)

static size_t resident(const char *p)
{
    return fa_test_resident_pages(p, SIZE);
}

static int child(int populate)
{
    const size_t pages = SIZE / PAGE, few = pages / 8, most = pages - pages / 8;

    char *a = fa_calloc(1, SIZE);
    CHECK(a != NULL);
    CHECK_LT(resident(a), few);
    memset(a, 1, SIZE);
    fa_free(a);

    /* Used whole: the next blocks are populated (read as zero), but one in 8 is left alone
     * to keep watching; that one, used little, stops the populating. */
    int watched = -1;
    for (int i = 0; i < 8 && watched < 0; i++) {
        char *b = fa_calloc(1, SIZE);
        CHECK(b != NULL);
        size_t r = resident(b);
        if (!populate || r < few) {
            watched = i; /* (reading it all would count as using it) */
        } else {
            CHECK_GE(r, most);
            for (size_t k = 0; k < SIZE; k += 512)
                CHECK_EQ(b[k] + b[k + 511], 0);
        }
        b[0] = 1;
        fa_free(b);
    }
    CHECK_EQ(watched, populate ? 7 : 0);
    for (int i = 0; i < 3; i++) {
        char *c = fa_calloc(1, SIZE);
        CHECK(c != NULL);
        CHECK_LT(resident(c), few);
        fa_free(c);
    }

    char *used = fa_calloc(1, SIZE);
    CHECK(used != NULL);
    CHECK_LT(resident(used), few);
    memset(used, 1, SIZE);
    char *next = fa_calloc(1, SIZE);
    CHECK(next != NULL);
    if (populate)
        CHECK_GE(resident(next), most);
    else
        CHECK_LT(resident(next), few);
    fa_free(next);
    fa_free(used);
    return 0;
}

int main(int argc, char **argv)
{
    (void)argc;
    fa_test_require_populate();
    int on = fa_test_off_on(argv, "FITALLOC_CALLOC_POPULATE", "FITALLOC_LARGE_CACHE=0");
    if (on >= 0)
        return child(on);
    printf("ok: large callocs are populated after a block used whole, not after one used little\n");
    return 0;
}

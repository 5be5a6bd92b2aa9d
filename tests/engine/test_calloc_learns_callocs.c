/* Whether large callocs are faulted in at once is learnt from calloc'd blocks alone
 * (engine/large_populate.c): xz fills its malloc'd buffers whole but touches a part of its
 * calloc'd hash tables, and populating those held 1.38 times glibc's peak RSS (record 045).
 *   1. an 8 MiB malloc'd block written whole and freed: the program uses its blocks whole;
 *   2. an 8 MiB calloc, left alone (the first of a kind is watched), touched on one page;
 *   3. the next 8 MiB calloc, while that one lives: it is not faulted in (before, it was:
 *      the malloc'd block had taught it).
 * Without the large-block cache, so that every block is a fresh mapping. Skipped (77) on a
 * kernel without MADV_POPULATE_WRITE (before Linux 5.14), where nothing is populated. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"
#include "rerun.h"
#include "rss.h"
#include "fitalloc.h"

#define SIZE ((size_t)8 << 20)
#define PAGE ((size_t)4096)

static int child(void)
{
    const size_t few = SIZE / PAGE / 8;
    char *buffer = fa_malloc(SIZE);
    CHECK(buffer != NULL);
    memset(buffer, 1, SIZE);
    fa_free(buffer);

    char *table = fa_calloc(1, SIZE);
    CHECK(table != NULL);
    CHECK_LT(fa_test_resident_pages(table, SIZE), few);
    table[SIZE / 2] = 1;
    char *next = fa_calloc(1, SIZE);
    CHECK(next != NULL);
    size_t resident = fa_test_resident_pages(next, SIZE);
    if (resident >= few) {
        fprintf(stderr,
                "a calloc after a malloc'd block used whole: %zu of its %zu pages "
                "resident at once\n",
                resident, SIZE / PAGE);
        return 1;
    }
    CHECK_EQ(next[SIZE - 1] + next[0], 0);
    fa_free(next);
    fa_free(table);
    return 0;
}

int main(int argc, char **argv)
{
    (void)argc;
    if (getenv("FITALLOC_LARGE_CACHE"))
        return child();
    fa_test_require_populate();
    const char *env[] = {"FITALLOC_LARGE_CACHE=0", NULL};
    fa_test_rerun("FITALLOC_LARGE_CACHE=0", env, argv);
    printf("ok: a calloc is not faulted in because a malloc'd block was used whole\n");
    return 0;
}

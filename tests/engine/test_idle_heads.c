/* ctest labels: reliability */
/* A class the program has stopped using gives its page back. A buffer grown once from 16 KiB to
 * 400 KiB (each step a new block, the old one freed: a vector's growth) leaves an empty page at
 * the head of each medium and big class it passed through; the heap keeps a head at hand on
 * purpose, for the next malloc of that size. fa_collect must give them all back at once; and
 * once such a head has stayed empty and unused for FITALLOC_PURGE_DELAY (20 ms here, in a
 * process of its own), the allocator's next slow paths must release it without being asked.
 * fa_heap_visit then lists none of those pages (it lists pages in use, and an empty head kept
 * at hand with `used` 0). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "fitalloc-stats.h"
#include "fitalloc.h"
#include "rerun.h"
#include "purge_test.h"

#define FIRST (16u << 10)
#define LAST (400u << 10)

static void count_empty(const struct fa_heap_area *area, void *arg)
{
    if (area->kind == FA_AREA_PAGE && area->mine && area->used == 0 && area->block_size >= FIRST &&
        area->block_size <= 2 * LAST)
        ++*(int *)arg;
}

static int empty_heads(void)
{
    int n = 0;
    CHECK(fa_heap_visit(count_empty, &n) >= 0);
    return n;
}

/* The growth; the number of empty heads it left. */
static int grow_a_buffer(void)
{
    char *buffer = NULL;
    for (size_t n = FIRST; n <= LAST; n += n / 4) {
        char *grown = fa_malloc(n);
        CHECK(grown != NULL);
        memset(grown, 0x5a, n);
        fa_free(buffer);
        buffer = grown;
    }
    fa_free(buffer);
    int left = empty_heads();
    CHECK_MSG(left >= 5, "only %d empty pages after the growth", left);
    return left;
}

static int child(void)
{
    CHECK_EQ(fa_option_get("purge_delay"), 20);
    int before = grow_a_buffer();
    fa_collect();
    CHECK_MSG(empty_heads() == 0, "fa_collect left %d of %d empty pages", empty_heads(), before);

    /* Other work: 4 KiB blocks take the slow path, which looks at the idle heads now and then. */
    before = grow_a_buffer();
    int after = before, rounds = 0;
    for (double until = now_s() + 10; after > 0 && now_s() < until; rounds++) {
        void *b[64];
        for (int i = 0; i < 64; i++) {
            b[i] = fa_malloc(4096);
            CHECK(b[i] != NULL);
        }
        for (int i = 0; i < 64; i++)
            fa_free(b[i]);
        struct timespec pause = {0, 2 * 1000 * 1000};
        nanosleep(&pause, NULL);
        after = empty_heads();
    }
    CHECK_MSG(after == 0, "%d of %d empty pages still kept after %d rounds", after, before, rounds);
    printf("engine/idle_heads: ok (%d empty pages released after %d rounds)\n", before, rounds);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--child") == 0)
        return child();
    const char *env[] = {"FITALLOC_PURGE_DELAY=20", "FITALLOC_MODE", NULL};
    char *args[] = {argv[0], (char *)"--child", NULL};
    fa_test_rerun("FITALLOC_PURGE_DELAY=20", env, args);
    return 0;
}

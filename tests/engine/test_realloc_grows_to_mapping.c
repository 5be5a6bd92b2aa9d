/* ctest labels: reliability */
/* A block that realloc grows past the medium classes (128 KiB) becomes a large block, a mapping
 * of its own, and grows on in that mapping: a string doubled by realloc (SQLite's group_concat)
 * took a block of another big class's 2 MiB page at each step, each left resident there. Here a
 * 64 KiB block doubled up to 2 MiB keeps its contents, takes no block of a big class, and makes
 * one large block (the later steps resize its mapping); a block that stays within its own size,
 * or shrinks, still stays where it is. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "fitalloc.h"
#include "fitalloc-stats.h"

#define KIB ((size_t)1 << 10)

static void stats(struct fa_stats *s)
{
    memset(s, 0, sizeof *s);
    s->size = sizeof *s;
    CHECK(fa_stats_get(s) == 0);
}

/* Blocks handed out by the classes above 128 KiB since start. */
static uint64_t big_class_allocs(const struct fa_stats *s)
{
    uint64_t n = 0;
    for (size_t i = 0; i < FA_STATS_CLASSES; i++)
        if (s->size_class[i].block_size > 128 * KIB)
            n += s->size_class[i].allocs;
    return n;
}

static void fill(unsigned char *p, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        p[i] = (unsigned char)(i * 13u + 5);
}

static void check_contents(const unsigned char *p, size_t n, size_t step)
{
    for (size_t i = 0; i < n; i++)
        CHECK_MSG(p[i] == (unsigned char)(i * 13u + 5), "byte %zu lost at step %zu", i, step);
}

int main(void)
{
    struct fa_stats before, after;
    size_t n = 64 * KIB;
    unsigned char *p = fa_malloc(n);
    CHECK(p != NULL);
    fill(p, 0, n);
    stats(&before);
    size_t step = 1;
    for (; n < 2048 * KIB; step++) {
        size_t grown = 2 * n + 8; /* as a string doubles with its terminator */
        p = fa_realloc(p, grown);
        CHECK(p != NULL);
        check_contents(p, n, step);
        fill(p, n, grown);
        n = grown;
    }
    stats(&after);
    CHECK_MSG(big_class_allocs(&after) == big_class_allocs(&before),
              "%llu blocks of the big classes handed out while the block grew",
              (unsigned long long)(big_class_allocs(&after) - big_class_allocs(&before)));
    /* ThreadSanitizer builds copy where mremap would grow the mapping (platform/os_linux.c):
     * there every step past 128 KiB makes a large block of its own. */
    uint64_t expected = FA_TEST_TSAN ? step - 1 : 1;
    CHECK_MSG(after.large_allocs == before.large_allocs + expected,
              "%llu large blocks made for one growing block, not %llu",
              (unsigned long long)(after.large_allocs - before.large_allocs),
              (unsigned long long)expected);
    fa_free(p);

    /* Within its size, or smaller, a block stays: no mapping for it. */
    unsigned char *q = fa_malloc(100 * KIB);
    CHECK(q != NULL);
    stats(&before);
    CHECK(fa_realloc(q, 90 * KIB) == q);
    CHECK(fa_realloc(q, 60 * KIB) == q);
    stats(&after);
    CHECK(after.large_allocs == before.large_allocs);
    fa_free(q);
    printf("ok: a block realloc grows past 128 KiB grows on as one mapping\n");
    return 0;
}

/* FITALLOC_QUARANTINE: in secure mode, how many bytes of freed blocks each thread holds back from
 * reuse. The test runs itself again with FITALLOC_SECURE=1 and the quarantine at 0, 4K and 64K
 * bytes; each run frees 3000 blocks of 100 bytes and counts the frees the statistics see (a
 * block counts as freed when it leaves the quarantine): the quarantine holds the newest
 * limit / block-size blocks (the newest one always, whatever the limit), and the blocks it
 * holds are none of those the next mallocs hand out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fitalloc.h"
#include "rerun.h"
#include "stats.h"

#define COUNT 3000
#define SIZE 100

static void *blocks[COUNT];
static void *again[COUNT];

static int run(long long limit)
{
    CHECK_EQ(fa_option_get("secure"), 1);
    CHECK_EQ(fa_option_get("quarantine"), limit);
    struct fa_stats before = fa_test_stats();
    for (int i = 0; i < COUNT; i++) {
        blocks[i] = fa_malloc(SIZE);
        CHECK(blocks[i] != NULL);
        memset(blocks[i], 0x11, SIZE);
    }
    struct fa_stats allocated = fa_test_stats();
    /* The size class the blocks took: the one COUNT allocations more. */
    uint64_t block_size = 0;
    for (int c = 0; c < FA_STATS_CLASSES; c++)
        if (allocated.size_class[c].allocs - before.size_class[c].allocs == COUNT)
            block_size = allocated.size_class[c].block_size;
    CHECK(block_size >= SIZE);
    for (int i = 0; i < COUNT; i++)
        fa_free(blocks[i]);
    uint64_t freed = fa_test_stats().frees - allocated.frees;

    uint64_t held = (uint64_t)limit / block_size;
    if (held < 1)
        held = 1;
    CHECK_MSG(freed == COUNT - held,
              "quarantine %lld: %llu of %d frees seen, expected %llu (%llu-byte blocks)", limit,
              (unsigned long long)freed, COUNT, (unsigned long long)(COUNT - held),
              (unsigned long long)block_size);

    /* The blocks still held are not handed out again. */
    for (int i = 0; i < COUNT; i++) {
        again[i] = fa_malloc(SIZE);
        CHECK(again[i] != NULL);
    }
    for (int i = 0; i < COUNT; i++)
        for (uint64_t h = COUNT - held; h < COUNT; h++)
            CHECK_MSG(again[i] != blocks[h],
                      "quarantine %lld: block %llu of the quarantine handed out", limit,
                      (unsigned long long)h);
    for (int i = 0; i < COUNT; i++)
        fa_free(again[i]);
    printf("quarantine %lld: %llu blocks of %llu bytes held\n", limit, (unsigned long long)held,
           (unsigned long long)block_size);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "--limit") == 0)
        return run(atoll(argv[2]));
    const char *limits[][2] = {{"0", "0"}, {"4K", "4096"}, {"64K", "65536"}};
    for (size_t i = 0; i < sizeof limits / sizeof *limits; i++) {
        char setting[64];
        snprintf(setting, sizeof setting, "FITALLOC_QUARANTINE=%s", limits[i][0]);
        const char *env[] = {"FITALLOC_SECURE=1", setting, NULL};
        char *args[] = {argv[0], (char *)"--limit", (char *)limits[i][1], NULL};
        fa_test_rerun(setting, env, args);
    }
    printf("secure/quarantine: ok\n");
    return 0;
}

/* FITALLOC_SEGMENT_CACHE: how many emptied 4 MiB segments keep their memory for reuse. The test
 * runs itself again with the cache at 0, 2 and 6 segments and a purge delay (60 s) that nothing
 * reaches during the test; each run fills 14 segments with 64-byte blocks, writes them, frees
 * them all and reads fa_stats_get: the memory still committed beyond what it was before the
 * blocks is that of the cached segments, about 4 MiB each (a segment beyond the cache goes cold
 * at once: everything but its first 4 KiB page goes back to the OS), plus the segment holding
 * the thread's pinned head page, which never empties (it leaves 13 segments to cache). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fitalloc.h"
#include "rerun.h"
#include "stats.h"

#define MIB (1024ll * 1024ll)
#define SEGMENT (4 * MIB)
#define SEGMENTS 14
#define BLOCK 64

static int run(long long cache)
{
    CHECK_EQ(fa_option_get("segment_cache"), cache);
    CHECK_EQ(fa_option_get("purge_delay"), 60000);
    size_t count = (size_t)(SEGMENTS * SEGMENT / BLOCK);
    void **blocks = fa_malloc(count * sizeof *blocks); /* a large block: no segment of its own */
    CHECK(blocks != NULL);
    long long before = (long long)fa_test_stats().committed;
    for (size_t i = 0; i < count; i++) {
        blocks[i] = fa_malloc(BLOCK);
        CHECK(blocks[i] != NULL);
        memset(blocks[i], 0x3c, BLOCK);
    }
    long long full = (long long)fa_test_stats().committed;
    CHECK_GE(full - before, (SEGMENTS - 1) * SEGMENT);
    for (size_t i = 0; i < count; i++)
        fa_free(blocks[i]);
    long long kept = (long long)fa_test_stats().committed - before;
    fa_free(blocks);
    printf("segment cache %lld: %lld KiB committed by the blocks, %lld KiB kept after their "
           "free\n",
           cache, (full - before) >> 10, kept >> 10);
    fflush(stdout);
    /* Each cached segment keeps nearly all its 4 MiB (4080 KiB), and so does the segment with
     * the head page; a cold one keeps 4 KiB. One segment more or fewer in the cache is caught. */
    CHECK_MSG(kept >= cache * (SEGMENT - MIB / 2) + SEGMENT && kept < (cache + 2) * SEGMENT,
              "%lld KiB kept with a cache of %lld segments", kept >> 10, cache);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "--cache") == 0)
        return run(atoll(argv[2]));
    const char *caches[] = {"0", "2", "6"};
    for (size_t i = 0; i < sizeof caches / sizeof *caches; i++) {
        char setting[64];
        snprintf(setting, sizeof setting, "FITALLOC_SEGMENT_CACHE=%s", caches[i]);
        const char *env[] = {setting, "FITALLOC_PURGE_DELAY=60000", NULL};
        char *args[] = {argv[0], (char *)"--cache", (char *)caches[i], NULL};
        fa_test_rerun(setting, env, args);
    }
    printf("reliability/segment_cache: ok\n");
    return 0;
}

/* ctest labels: reliability */
/* FITALLOC_SEGMENT_CACHE: how many emptied 4 MiB segments keep their memory for reuse. The test
 * runs itself again with the cache at 0, 2 and 6 segments and a purge delay (60 s) that nothing
 * reaches during the test; each run fills 14 segments with 64-byte blocks, writes them, frees
 * them all and reads fa_stats_get: the memory still committed beyond what it was before the
 * blocks is that of the cached segments, nearly 4 MiB each (a segment beyond the cache goes cold
 * at once: everything but its first 4 KiB page goes back to the OS), plus what depends on the
 * build (where malloc is fitalloc's, the process's other blocks keep a segment in use: 4.5 MiB
 * in the Release build, 0.5 MiB under ASan). Each run sends what it kept to the test through a
 * pipe: between runs, the difference is the cache's difference in segments, which catches one
 * segment more or fewer. */
#include <stdio.h>
#include <unistd.h>
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

static long long run(long long cache)
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
    CHECK_MSG(kept >= cache * (SEGMENT - MIB / 2) && kept < (cache + 2) * SEGMENT,
              "%lld KiB kept with a cache of %lld segments", kept >> 10, cache);
    return kept;
}

int main(int argc, char **argv)
{
    if (argc > 3 && strcmp(argv[1], "--cache") == 0) {
        long long kept = run(atoll(argv[2]));
        char line[32];
        int len = snprintf(line, sizeof line, "%lld\n", kept);
        CHECK_EQ(write(atoi(argv[3]), line, (size_t)len), len);
        return 0;
    }
    int fds[2];
    CHECK_EQ(pipe(fds), 0);
    char fd_text[16];
    snprintf(fd_text, sizeof fd_text, "%d", fds[1]);
    const long long caches[] = {0, 2, 6};
    long long kept[3];
    for (int i = 0; i < 3; i++) {
        char setting[64], value[16];
        snprintf(value, sizeof value, "%lld", caches[i]);
        snprintf(setting, sizeof setting, "FITALLOC_SEGMENT_CACHE=%s", value);
        const char *env[] = {setting, "FITALLOC_PURGE_DELAY=60000", NULL};
        char *args[] = {argv[0], (char *)"--cache", value, fd_text, NULL};
        fa_test_rerun(setting, env, args);
    }
    close(fds[1]);
    char text[128];
    ssize_t n = read(fds[0], text, sizeof text - 1);
    CHECK(n > 0);
    text[n] = 0;
    close(fds[0]);
    CHECK_EQ(sscanf(text, "%lld %lld %lld", &kept[0], &kept[1], &kept[2]), 3);
    /* The same build, the same blocks: what differs is the segments in the cache. */
    for (int i = 1; i < 3; i++) {
        long long more = kept[i] - kept[i - 1], segments = caches[i] - caches[i - 1];
        CHECK_MSG(more >= segments * (SEGMENT - MIB / 2) && more <= segments * SEGMENT,
                  "a cache of %lld segments keeps %lld KiB more than one of %lld", caches[i],
                  more >> 10, caches[i - 1]);
    }
    printf("engine/segment_cache: ok\n");
    return 0;
}

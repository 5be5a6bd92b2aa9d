/* ctest labels: threads */
/* Memory goes back to the OS after the purge delay even when the program stops calling the
 * allocator: allocate ~64 MiB in small and medium blocks and a few large ones, free everything,
 * then make no allocator call at all while polling fa_stats_get() (which does not allocate) and,
 * outside sanitizer builds, the process RSS. Both must fall far below the peak. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "fitalloc.h"
#include "rss.h"

#define MIB (1024u * 1024u)

static struct fa_stats snap(void)
{
    struct fa_stats s;
    s.size = sizeof s;
    CHECK_EQ(fa_stats_get(&s), 0);
    return s;
}

int main(void)
{
    enum { SMALL = 200000, LARGE = 8 };
    static void *small[SMALL];
    void *large[LARGE];
    unsigned long rss_before = fa_test_rss_bytes();
    for (int i = 0; i < SMALL; i++) {
        size_t n = 64 + (size_t)(i % 7) * 96; /* 64 .. 640 bytes: many pages */
        small[i] = fa_malloc(n);
        CHECK(small[i] != NULL);
        memset(small[i], 0x5a, n);
    }
    for (int i = 0; i < LARGE; i++) {
        large[i] = fa_malloc(3 * MIB);
        CHECK(large[i] != NULL);
        memset(large[i], 0x5a, 3 * MIB);
    }
    struct fa_stats peak = snap();
    unsigned long rss_peak = fa_test_rss_bytes();
    CHECK_GE(peak.committed, 64ull * MIB);
    for (int i = 0; i < SMALL; i++)
        fa_free(small[i]);
    for (int i = 0; i < LARGE; i++)
        fa_free(large[i]);

    /* From here on: no allocator call. The delay is 100 ms by default; allow 20 s. */
    struct fa_stats now = snap();
    unsigned long rss_now = fa_test_rss_bytes();
    for (int tries = 0; tries < 200; tries++) {
        now = snap();
        rss_now = fa_test_rss_bytes();
        if (now.committed < 8ull * MIB && (FA_TEST_SANITIZED || rss_now < rss_before + 16ul * MIB))
            break;
        struct timespec pause = {0, 100 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    CHECK_MSG(now.committed < 8ull * MIB, "committed %llu bytes after idling (peak %llu)",
              (unsigned long long)now.committed, (unsigned long long)peak.committed);
    CHECK_GE(now.purged, peak.purged + 48ull * MIB);
    if (!FA_TEST_SANITIZED)
        CHECK_MSG(rss_now < rss_before + 16ul * MIB, "RSS %lu after idling (before %lu, peak %lu)",
                  rss_now, rss_before, rss_peak);
    printf("engine/purge_idle: ok (committed %llu -> %llu bytes)\n",
           (unsigned long long)peak.committed, (unsigned long long)now.committed);
    return 0;
}

/* ctest labels: reliability */
/* FITALLOC_PURGE_THREAD=0 still gives memory back. The test runs itself again with
 * FITALLOC_PURGE_THREAD=0 and FITALLOC_PURGE_DELAY=50ms; there it checks that the options took and
 * that no purge thread runs (one thread in /proc/self/task), allocates and touches 200 MiB (64 MiB
 * under sanitizers) in small and medium blocks, frees them all, and then keeps the program busy
 * with ordinary malloc/free work (batches of blocks of mixed sizes, allocated and freed) for
 * longer than the delay. Purging then happens from the allocator's own calls: committed memory
 * (fa_stats_get) must fall below 24 MiB and, outside sanitizer builds, the RSS (statm, current)
 * below the RSS before the 200 MiB plus 24 MiB. A purge that never happens without the thread
 * would keep the whole 200 MiB. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "rerun.h"
#include "threads.h"
#include "fitalloc.h"
#include "rss.h"
#include "purge_test.h"

#define MIB (1024ul * 1024ul)

/* No 1 s sleep at the exit of each of the test's processes (all threads are joined by then). */
FA_TEST_TSAN_OPTIONS("atexit_sleep_ms=0")

static uint64_t committed(void)
{
    struct fa_stats s;
    s.size = sizeof s;
    CHECK_EQ(fa_stats_get(&s), 0);
    return s.committed;
}

static int child(void)
{
    CHECK_EQ(fa_option_get("purge_thread"), 0);
    CHECK_EQ(fa_option_get("purge_delay"), 50);
    CHECK_EQ(fa_test_thread_count(), 1); /* no purge thread */

    size_t total = (FA_TEST_SANITIZED ? 64 : 200) * MIB, nblocks = 0, got = 0;
    size_t cap = total / 16; /* blocks are 16 B .. 64 KiB, 4 KiB on average and more */
    void **blocks = fa_malloc(cap * sizeof *blocks);
    CHECK(blocks != NULL);
    fa_rng r;
    fa_rng_seed(&r, 42);
    unsigned long rss_before = fa_test_rss_bytes();
    while (got < total && nblocks < cap) {
        size_t n = fa_rng_below(&r, 4) ? 16 + (size_t)fa_rng_below(&r, 2000)
                                       : 8192 + (size_t)fa_rng_below(&r, 56 * 1024);
        char *p = fa_malloc(n);
        CHECK(p != NULL);
        memset(p, 0x5a, n);
        blocks[nblocks++] = p;
        got += n;
    }
    CHECK_GE(got, total);
    unsigned long rss_peak = fa_test_rss_bytes();
    uint64_t committed_peak = committed();
    CHECK_GE(committed_peak, total);
    if (!FA_TEST_SANITIZED)
        CHECK_GE(rss_peak, rss_before + total);
    for (size_t i = 0; i < nblocks; i++)
        fa_free(blocks[i]);
    fa_free(blocks);

    /* Keep working for up to 20 s (the delay is 50 ms); stop once memory is back. */
    unsigned long rss_now = fa_test_rss_bytes();
    uint64_t committed_now = committed();
    double start = now_s(), until = start + 20;
    int rounds = 0;
    while (now_s() < until) {
        busy_work(&r, 512);
        rounds++;
        if (rounds % 16 == 0) {
            committed_now = committed();
            rss_now = fa_test_rss_bytes();
            if (committed_now < 24 * MIB && (FA_TEST_SANITIZED || rss_now < rss_before + 24 * MIB))
                break;
            struct timespec pause = {0, 2 * 1000 * 1000};
            nanosleep(&pause, NULL);
        }
    }
    CHECK_MSG(committed_now < 24 * MIB, "committed %llu bytes after %d rounds (peak %llu)",
              (unsigned long long)committed_now, rounds, (unsigned long long)committed_peak);
    if (!FA_TEST_SANITIZED)
        CHECK_MSG(rss_now < rss_before + 24 * MIB,
                  "RSS %lu MiB after %d rounds of work (before %lu MiB, peak %lu MiB)",
                  rss_now / MIB, rounds, rss_before / MIB, rss_peak / MIB);
    CHECK_EQ(fa_test_thread_count(), 1);
    printf("engine/purge_nothread: ok (RSS %lu -> %lu -> %lu MiB, committed %llu -> %llu "
           "MiB, %d rounds, %.2f s)\n",
           rss_before / MIB, rss_peak / MIB, rss_now / MIB,
           (unsigned long long)(committed_peak / MIB), (unsigned long long)(committed_now / MIB),
           rounds, now_s() - start);
    return 0;
}

int main(int argc, char **argv)
{
    (void)argc;
    if (argc > 1 && strcmp(argv[1], "--child") == 0)
        return child();
    const char *env[] = {"FITALLOC_PURGE_THREAD=0", "FITALLOC_PURGE_DELAY=50", "FITALLOC_MODE",
                         NULL};
    char *args[] = {argv[0], (char *)"--child", NULL};
    fa_test_rerun("without a purge thread", env, args);
    return 0;
}

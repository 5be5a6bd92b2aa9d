/* FITALLOC_QUARANTINE: in secure mode, how many bytes of freed blocks each thread holds back from
 * reuse. The test runs itself again with FITALLOC_SECURE=1 and the quarantine at 0, 4K and 64K
 * bytes; each run frees 3000 blocks of 100 bytes and counts the frees the statistics see (a
 * block counts as freed when it leaves the quarantine): the quarantine holds the newest
 * limit / block-size blocks, 256 at most (the newest one always, whatever the limit), and
 * the blocks it holds are none of those the next mallocs hand out. Then, at 64K, a thread frees its blocks
 * while 9 others (the main thread and 8 more) hold a block each in their quarantines: the 10
 * quarantines share twice the limit (the thread's holds 2 * 64K / 10 bytes of blocks); once
 * the 8 have ended (their quarantines emptied) it holds 64K again. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fitalloc.h"
#include "rerun.h"
#include "stats.h"

#define COUNT 3000
#define SIZE 100
#define QUARANTINE_SLOTS 256 /* blocks a quarantine holds at most (docs/options.md) */

static void *blocks[COUNT];
static void *again[COUNT];

/* Frees COUNT blocks of SIZE bytes with `pre` blocks of that size in the quarantine already
 * and `share` bytes to hold; checks the frees seen (up to `slack` more: frees other threads
 * make meanwhile) and that the blocks held stay out of the next mallocs' way, whose blocks
 * are freed again (and held) in the end. Returns how many blocks the quarantine holds. */
static uint64_t round_of_frees(long long limit, uint64_t share, uint64_t pre, uint64_t slack)
{
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

    uint64_t held = share / block_size;
    if (held < 1)
        held = 1;
    if (held > QUARANTINE_SLOTS)
        held = QUARANTINE_SLOTS;
    CHECK_MSG(freed >= COUNT + pre - held && freed <= COUNT + pre - held + slack,
              "quarantine %lld (%llu bytes held): %llu of %d frees seen, expected %llu "
              "(%llu-byte blocks)",
              limit, (unsigned long long)share, (unsigned long long)freed, COUNT,
              (unsigned long long)(COUNT + pre - held), (unsigned long long)block_size);

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
    return held;
}

static int run(long long limit)
{
    CHECK_EQ(fa_option_get("secure"), 1);
    CHECK_EQ(fa_option_get("quarantine"), limit);
    round_of_frees(limit, (uint64_t)limit, 0, 0);
    return 0;
}

#define HOLDERS 8

static pthread_barrier_t holding, done;
static pthread_t holders[HOLDERS];
static long long shared_limit;

/* A thread whose quarantine holds one block until the worker is done with its first round. */
static void *holder(void *arg)
{
    (void)arg;
    fa_free(fa_malloc(SIZE));
    pthread_barrier_wait(&holding);
    pthread_barrier_wait(&done);
    return NULL;
}

/* A thread of its own, whose quarantine starts empty: 10 quarantines hold blocks (the main
 * thread's, the holders', its own), then, the holders ended, 2. */
static void *worker(void *arg)
{
    (void)arg;
    uint64_t limit = (uint64_t)shared_limit;
    uint64_t held = round_of_frees(shared_limit, 2 * limit / (HOLDERS + 2), 0, 0);
    pthread_barrier_wait(&done);
    for (int t = 0; t < HOLDERS; t++)
        CHECK_EQ(pthread_join(holders[t], NULL), 0);
    /* The holders' last frees, as they end, may be counted late: up to a few per holder. */
    round_of_frees(shared_limit, limit, held, 4 * HOLDERS);
    return NULL;
}

static int run_shared(long long limit)
{
    CHECK_EQ(fa_option_get("secure"), 1);
    CHECK_EQ(fa_option_get("quarantine"), limit);
    shared_limit = limit;
    fa_free(fa_malloc(SIZE)); /* the main thread's quarantine holds a block from here on */
    CHECK_EQ(pthread_barrier_init(&holding, NULL, HOLDERS + 1), 0);
    CHECK_EQ(pthread_barrier_init(&done, NULL, HOLDERS + 1), 0);
    for (int t = 0; t < HOLDERS; t++)
        CHECK_EQ(pthread_create(&holders[t], NULL, holder, NULL), 0);
    pthread_barrier_wait(&holding);
    pthread_t w;
    CHECK_EQ(pthread_create(&w, NULL, worker, NULL), 0);
    CHECK_EQ(pthread_join(w, NULL), 0);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "--limit") == 0)
        return run(atoll(argv[2]));
    if (argc > 2 && strcmp(argv[1], "--shared") == 0)
        return run_shared(atoll(argv[2]));
    const char *limits[][2] = {{"0", "0"}, {"4K", "4096"}, {"64K", "65536"}};
    for (size_t i = 0; i < sizeof limits / sizeof *limits; i++) {
        char setting[64];
        snprintf(setting, sizeof setting, "FITALLOC_QUARANTINE=%s", limits[i][0]);
        const char *env[] = {"FITALLOC_SECURE=1", setting, NULL};
        char *args[] = {argv[0], (char *)"--limit", (char *)limits[i][1], NULL};
        fa_test_rerun(setting, env, args);
    }
    const char *env[] = {"FITALLOC_SECURE=1", "FITALLOC_QUARANTINE=64K", NULL};
    char *args[] = {argv[0], (char *)"--shared", (char *)"65536", NULL};
    fa_test_rerun("FITALLOC_QUARANTINE=64K, 9 threads", env, args);
    printf("secure/quarantine: ok\n");
    return 0;
}

/* ctest labels: reliability */
/* The large block a thread freed last stays mapped in its heap for its next large malloc
 * (engine/large.c, "hot"), and goes back to the OS once it has waited the purge delay.
 *   1. A 1 MiB block freed: its mapping stays (the reserved bytes do not drop), the statistics
 *      count it freed (large frees = large allocs, nothing in use), a heap walk no longer lists
 *      it, and the next 1 MiB malloc gets the same mapping (the block a page further or back).
 *   2. Another thread's malloc of the same size does not get that mapping; the freeing
 *      thread's next one does.
 *   3. A request more than an eighth smaller does not take it (the mapping then goes the way
 *      of any freed block); the statistics still count just the new block in use.
 *   4. Freed and left alone, the block's memory goes back to the OS within a few purge delays
 *      (a run with FITALLOC_PURGE_DELAY=20; polled for up to 10 s). The other steps run with a
 *      delay no step outlasts.
 *   5. Four threads each malloc, fill, check and free blocks of 1 MiB and of 600 KiB to 1 MiB
 *      at random, some freed by another thread: every block keeps its contents, and at the
 *      end the statistics balance (as many large frees as allocs, no byte in use).
 * With FITALLOC_LARGE_CACHE=0 nothing is kept: step 1's free gives the mapping back at once. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "rerun.h"
#include "stats.h"
#include "fitalloc.h"

#define MIB ((size_t)1 << 20)
#define PAGE ((size_t)4096)
#define THREADS 4

struct find {
    const void *p;
    int found;
};

static void find_area(const struct fa_heap_area *a, void *arg)
{
    struct find *f = arg;
    if (a->kind == FA_AREA_LARGE && a->start == f->p)
        f->found = 1;
}

static int listed(const void *p)
{
    struct find f = {p, 0};
    CHECK(fa_heap_visit(find_area, &f) >= 0);
    return f.found;
}

/* The first free of a process starts the purge thread, whose creation allocates: a block held
 * before that gives the process its first segment before reserved bytes are compared. */
static void *hold_first_segment(void)
{
    void *held = fa_malloc(64);
    CHECK(held != NULL);
    return held;
}

static void kept_and_reused(void)
{
    void *held = hold_first_segment();
    char *p = fa_malloc(MIB);
    CHECK(p != NULL);
    memset(p, 7, MIB);
    CHECK(listed(p));
    size_t usable = fa_malloc_usable_size(p);
    struct fa_stats before = fa_test_stats();
    fa_free(p);
    struct fa_stats after = fa_test_stats();
    CHECK_EQ(after.reserved, before.reserved);
    CHECK_EQ(after.large_frees, after.large_allocs);
    CHECK_EQ(after.large_in_use, 0);
    CHECK(!listed(p));
    char *q = fa_malloc(MIB);
    CHECK_MSG(q == p + PAGE || q == p - PAGE, "1 MiB after a free of 1 MiB: %p, freed %p",
              (void *)q, (void *)p);
    CHECK(listed(q));
    /* The same usable size wherever the block starts: a reuse leaves the shared counter be. */
    CHECK_EQ(fa_malloc_usable_size(q), usable);
    CHECK_EQ(fa_test_stats().large_in_use, fa_malloc_usable_size(q));
    fa_free(q);

    /* Far smaller: the mapping leaves the thread's heap (the shared cache may hand it out). */
    char *small = fa_malloc(MIB - MIB / 4);
    CHECK(small != NULL);
    memset(small, 1, MIB - MIB / 4);
    CHECK_EQ(fa_test_stats().large_in_use, fa_malloc_usable_size(small));
    fa_free(small);
    fa_free(held);
}

/* The mapping is the freeing thread's alone: another thread's malloc of the same size does not
 * get it (a shared cache would hand it over), the freeing thread's next one does. */
static void *malloc_size(void *arg)
{
    return fa_malloc(*(const size_t *)arg);
}

/* For 1 MiB, and for 4 MiB: the most kept this way with the default FITALLOC_LARGE_CACHE. */
static void kept_for_its_thread(size_t n)
{
    char *p = fa_malloc(n);
    CHECK(p != NULL);
    fa_free(p);
    pthread_t t;
    void *other = NULL;
    CHECK_EQ(pthread_create(&t, NULL, malloc_size, &n), 0);
    CHECK_EQ(pthread_join(t, &other), 0);
    CHECK(other != NULL);
    CHECK_MSG((uintptr_t)other >> 22 != (uintptr_t)p >> 22,
              "another thread got the mapping this thread freed last");
    char *q = fa_malloc(n);
    CHECK(q == p + PAGE || q == p - PAGE);
    fa_free(other);
    fa_free(q);
}

/* A 1 MiB block made, written and freed; the bytes reserved from the OS before the free. */
static uint64_t write_and_free_mib(void)
{
    void *held = hold_first_segment();
    char *p = fa_malloc(MIB);
    CHECK(p != NULL);
    memset(p, 7, MIB);
    uint64_t before = fa_test_stats().reserved;
    fa_free(p);
    fa_free(held); /* small and medium segments are never unmapped */
    return before;
}

static void kept_nothing(void)
{
    uint64_t before = write_and_free_mib();
    CHECK_LE(fa_test_stats().reserved + MIB, before);
}

static void returned_in_time(void)
{
    uint64_t before = write_and_free_mib();
    int back = 0;
    for (int i = 0; i < 1000 && !back; i++) {
        usleep(10000);
        back = fa_test_stats().reserved + MIB <= before;
    }
    CHECK_MSG(back, "a freed 1 MiB block was still mapped 10 s later");
}

/* Blocks passed between threads: each thread frees what its neighbour left in `mailbox`. */
static char *mailbox[THREADS];
static pthread_mutex_t mailbox_lock = PTHREAD_MUTEX_INITIALIZER;

static void *churn(void *arg)
{
    uintptr_t t = (uintptr_t)arg;
    fa_rng r;
    fa_rng_seed(&r, 7 + t);
    unsigned long rounds = fa_test_ops(2000);
    for (unsigned long i = 0; i < rounds; i++) {
        size_t n = fa_rng_below(&r, 2) ? MIB : MIB - fa_rng_below(&r, 400 * 1024);
        unsigned char *b = fa_malloc(n);
        CHECK(b != NULL);
        unsigned char tag = (unsigned char)(t * 31 + i);
        b[0] = tag;
        b[n / 2] = tag;
        b[n - 1] = tag;
        CHECK_MSG(fa_malloc_usable_size(b) >= n, "usable size below the request");
        CHECK(b[0] == tag && b[n / 2] == tag && b[n - 1] == tag);
        if (fa_rng_below(&r, 4) == 0) { /* hand it to the next thread, free what was left */
            pthread_mutex_lock(&mailbox_lock);
            unsigned char *old = (unsigned char *)mailbox[(t + 1) % THREADS];
            mailbox[(t + 1) % THREADS] = (char *)b;
            pthread_mutex_unlock(&mailbox_lock);
            b = old;
        }
        fa_free(b);
    }
    return NULL;
}

static void threads(void)
{
    pthread_t th[THREADS];
    for (uintptr_t t = 0; t < THREADS; t++)
        CHECK_EQ(pthread_create(&th[t], NULL, churn, (void *)t), 0);
    for (int t = 0; t < THREADS; t++)
        CHECK_EQ(pthread_join(th[t], NULL), 0);
    for (int t = 0; t < THREADS; t++)
        fa_free(mailbox[t]);
    struct fa_stats s = fa_test_stats();
    CHECK_EQ(s.large_frees, s.large_allocs);
    CHECK_EQ(s.large_in_use, 0);
}

int main(int argc, char **argv)
{
    (void)argc;
    const char *mode = getenv("FA_TEST_HOT");
    if (mode) {
        if (strcmp(mode, "none") == 0) {
            kept_nothing();
            return 0;
        }
        if (strcmp(mode, "time") == 0) {
            returned_in_time();
            return 0;
        }
        kept_and_reused();
        kept_for_its_thread(MIB);
        kept_for_its_thread(4 * MIB);
        threads();
        return 0;
    }
    const char *hot[] = {"FA_TEST_HOT=keep", "FITALLOC_LARGE_CACHE=64M",
                         "FITALLOC_PURGE_DELAY=60000", NULL};
    fa_test_rerun("large blocks kept by their thread", hot, argv);
    /* The purge thread gives it back while this thread only waits (the aarch64 stage turns
     * the thread off for the rest of the tests). */
    const char *time[] = {"FA_TEST_HOT=time", "FITALLOC_PURGE_DELAY=20", "FITALLOC_PURGE_THREAD=1",
                          NULL};
    fa_test_rerun("a kept block given back after the delay", time, argv);
    const char *none[] = {"FA_TEST_HOT=none", "FITALLOC_LARGE_CACHE=0", NULL};
    fa_test_rerun("FITALLOC_LARGE_CACHE=0", none, argv);
    printf("ok: a thread's last freed large block is kept, reused, and given back in time\n");
    return 0;
}

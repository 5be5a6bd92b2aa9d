/* ctest labels: threads */
/* Heaps of ended threads (FITALLOC_PARKED_HEAPS): each case runs in a process of its own,
 * with the options it needs.
 *   next:    a thread whose first call is malloc takes the heap parked last, with its pages;
 *   limit:   with FITALLOC_PARKED_HEAPS=2, of four threads that end holding blocks two heaps
 *            are parked and the other two are abandoned (their segments on the abandoned list);
 *   expire:  a parked heap no thread takes is abandoned by the purger thread once
 *            FITALLOC_PURGE_DELAY * 10 ms have passed, not before. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "fitalloc-stats.h"
#include "fitalloc.h"
#include "rerun.h"
#include "threads.h"

#define BLOCKS 64

static struct fa_stats stats_now(void)
{
    struct fa_stats s = {.size = sizeof s};
    CHECK_EQ(fa_stats_get(&s), 0);
    return s;
}

/* The owner id fa_heap_visit gives the page of p. */
static void find_owner(const struct fa_heap_area *a, void *arg)
{
    uintptr_t *want = arg; /* in: the block; out: its page's owner */
    if (a->kind == FA_AREA_PAGE && (uintptr_t)a->start <= want[0] &&
        want[0] < (uintptr_t)a->start + a->size)
        want[1] = a->owner;
}

static uintptr_t owner_of(const void *p)
{
    uintptr_t q[2] = {(uintptr_t)p, 0};
    CHECK_GT(fa_heap_visit(find_owner, q), 0);
    return q[1];
}

/* Allocates BLOCKS blocks of 200 bytes into arg (an array), and ends holding them. */
static void *hold_blocks(void *arg)
{
    void **out = arg;
    for (int i = 0; i < BLOCKS; i++)
        CHECK((out[i] = fa_malloc(200)) != NULL);
    return NULL;
}

static void run_thread(void *(*fn)(void *), void *arg)
{
    fa_test_on_thread(fn, arg);
}

static void *malloc_one(void *arg)
{
    void **out = arg;
    CHECK((*out = fa_malloc(200)) != NULL);
    return NULL;
}

static void free_all(void **blocks, int n)
{
    for (int i = 0; i < n; i++)
        fa_free(blocks[i]);
}

static void next(void)
{
    static void *held[BLOCKS];
    run_thread(hold_blocks, held);
    uintptr_t parked = owner_of(held[0]);
    CHECK_NE(parked, 0);
    void *fresh = NULL;
    run_thread(malloc_one, &fresh);
    CHECK_EQ(owner_of(fresh), parked);
    fa_free(fresh);
    free_all(held, BLOCKS);
}

static pthread_barrier_t all_hold;

static void *hold_together(void *arg)
{
    hold_blocks(arg);
    pthread_barrier_wait(&all_hold); /* four heaps at once, not one taken over and over */
    return NULL;
}

static void limit(void)
{
    CHECK_EQ(fa_option_get("parked_heaps"), 2);
    static void *held[4][BLOCKS];
    pthread_t t[4];
    CHECK_EQ(pthread_barrier_init(&all_hold, NULL, 4), 0);
    for (int i = 0; i < 4; i++)
        CHECK_EQ(pthread_create(&t[i], NULL, hold_together, held[i]), 0);
    for (int i = 0; i < 4; i++)
        CHECK_EQ(pthread_join(t[i], NULL), 0);
    /* Two ended into the two places; the other two heaps were abandoned. */
    int parked = 0;
    for (int i = 0; i < 4; i++)
        parked += owner_of(held[i][0]) != 0;
    CHECK_EQ(parked, 2);
    CHECK_EQ(stats_now().abandoned, 2);
    for (int i = 0; i < 4; i++)
        free_all(held[i], BLOCKS);
    pthread_barrier_destroy(&all_hold);
}

static void expire(void)
{
    long long delay = fa_option_get("purge_delay");
    static void *held[BLOCKS];
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    run_thread(hold_blocks, held);
    CHECK_NE(owner_of(held[0]), 0);
    /* Abandoned once the delay has passed (the purger's clock counts whole milliseconds, so
     * half of it is the bound checked), and not never: 10 s is far beyond any wake-up. The
     * pages lose their owner before the segment reaches the abandoned list: wait for both
     * (under qemu the test saw the first without the second). */
    for (int ms = 0; owner_of(held[0]) != 0 || stats_now().abandoned != 1; ms++) {
        CHECK_MSG(ms < 10000, "the parked heap was not abandoned after %d ms", ms);
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    struct timespec end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    long long waited = (end.tv_sec - start.tv_sec) * 1000 + (end.tv_nsec - start.tv_nsec) / 1000000;
    CHECK_GE(waited, delay * 5);
    CHECK_EQ(stats_now().abandoned, 1);
    free_all(held, BLOCKS);
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        if (strcmp(argv[1], "next") == 0)
            next();
        else if (strcmp(argv[1], "limit") == 0)
            limit();
        else
            expire();
        return 0;
    }
    /* A long purge delay: no parked heap expires during next and limit. */
    static const char *const cases[][3] = {
        {"next", "FITALLOC_PARKED_HEAPS", "FITALLOC_PURGE_DELAY=60000"},
        {"limit", "FITALLOC_PARKED_HEAPS=2", "FITALLOC_PURGE_DELAY=60000"},
        {"expire", "FITALLOC_PARKED_HEAPS", "FITALLOC_PURGE_DELAY=20"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *env[] = {cases[i][1], cases[i][2], "FITALLOC_PURGE_THREAD", NULL};
        char *args[] = {argv[0], (char *)cases[i][0], NULL};
        fa_test_rerun(cases[i][0], env, args);
    }
    printf("engine/parked_heaps: ok\n");
    return 0;
}

/* ctest labels: threads */
/* Block loans (heap.c, record 126): a thread about to open fresh memory of a class takes the
 * remote-free stack of a page of that class of an idle thread, and hands its blocks out; each
 * goes back to its own page when freed. An owner allocates blocks of a class of its own and goes
 * idle; a freer frees them remotely, half before and half while a taker allocates in the class
 * (the taker's exchange of a stack races with the pushes); then the owner wakes and allocates
 * again, collecting its pages' stacks, while the taker frees the loaned blocks back into them.
 * Block by block: every block is filled from an id of its own and checked before it is freed
 * (a block handed out twice while live would hold the other's bytes), the taker's blocks are
 * distinct, blocks came from the owner's pages with FITALLOC_BLOCK_LOANS=1 (none by default),
 * and once every block is freed and the ended threads' heaps are collected, no page holds a
 * block of the class and the statistics count none live (none lost, none counted twice). */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blk.h"
#include "check.h"
#include "rerun.h"
#include "fitalloc-stats.h"
#include "fitalloc.h"

typedef struct fa_heap_s fa_heap_t;
void _fa_heap_check(const fa_heap_t *heap);
extern __thread fa_heap_t *_fa_heap_tls;

#define SIZE 256  /* a class of its own, a power of two (a class that borrows starts elsewhere) */
#define HELD 1200 /* about five 64 KiB pages of it */
#define OWNER_PAGES 16

static blk owned[HELD], taken[HELD], again[HELD];
static uintptr_t owner_pages[OWNER_PAGES];
static int owner_page_count;
/* 1: the owner is idle, its blocks held; 2: half of them freed, the taker may allocate;
 * 3: the taker has its blocks, the owner allocates again; 4: all freed. */
static atomic_int phase;

static bool in_owner_page(uintptr_t p)
{
    for (int i = 0; i < owner_page_count; i++)
        if (owner_pages[i] == (p & ~(uintptr_t)0xffff))
            return true;
    return false;
}

static void wait_phase(int at_least)
{
    while (atomic_load(&phase) < at_least)
        usleep(200);
}

static void *owner(void *arg)
{
    (void)arg;
    for (int i = 0; i < HELD; i++) {
        owned[i].p = fa_malloc(SIZE);
        blk_fill(&owned[i], SIZE);
        if (!in_owner_page((uintptr_t)owned[i].p)) {
            CHECK_LT(owner_page_count, OWNER_PAGES);
            owner_pages[owner_page_count++] = (uintptr_t)owned[i].p & ~(uintptr_t)0xffff;
        }
    }
    atomic_store(&phase, 1);
    /* Idle: no allocator call until the taker has its blocks. */
    wait_phase(3);
    for (int i = 0; i < HELD; i++) {
        again[i].p = fa_malloc(SIZE);
        blk_fill(&again[i], SIZE);
    }
    _fa_heap_check(_fa_heap_tls);
    wait_phase(4);
    for (int i = 0; i < HELD; i++)
        blk_del(&again[i]);
    return NULL;
}

static void *freer(void *arg)
{
    (void)arg;
    wait_phase(1);
    for (int i = 0; i < HELD; i++) {
        if (i == HELD / 2)
            atomic_store(&phase, 2);
        blk_del(&owned[i]);
        if (i % 32 == 0)
            sched_yield();
    }
    return NULL;
}

static int by_address(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const blk *)a)->p, y = (uintptr_t)((const blk *)b)->p;
    return (x > y) - (x < y);
}

static int from_owner; /* the taker's blocks that lay in the owner's pages */

static void *taker(void *arg)
{
    (void)arg;
    wait_phase(2);
    /* The owner has made no call for longer than a heap needs to count as idle (4 ms). */
    usleep(20 * 1000);
    for (int i = 0; i < HELD; i++) {
        taken[i].p = fa_malloc(SIZE);
        blk_fill(&taken[i], SIZE);
        from_owner += in_owner_page((uintptr_t)taken[i].p);
    }
    _fa_heap_check(_fa_heap_tls);
    static blk sorted[HELD];
    memcpy(sorted, taken, sizeof sorted);
    qsort(sorted, HELD, sizeof sorted[0], by_address);
    for (int i = 1; i < HELD; i++)
        CHECK_MSG(sorted[i].p != sorted[i - 1].p, "block %p handed out twice", (void *)sorted[i].p);
    atomic_store(&phase, 3);
    /* Freed while the owner allocates again: the loaned blocks go back to its pages' stacks as
     * it collects them. */
    for (int i = 0; i < HELD; i++) {
        blk_del(&taken[i]);
        if (i % 32 == 0)
            sched_yield();
    }
    atomic_store(&phase, 4);
    return NULL;
}

static void count_class(const struct fa_heap_area *area, void *arg)
{
    if (area->kind == FA_AREA_PAGE && area->block_size == SIZE)
        *(size_t *)arg += area->used;
}

static void run(bool loans)
{
    /* A heap of its own first: a thread whose first call frees a parked heap's block takes
     * that heap. */
    fa_free(fa_malloc(1));
    pthread_t th[3];
    void *(*fn[3])(void *) = {owner, freer, taker};
    for (int t = 0; t < 3; t++)
        CHECK_EQ(pthread_create(&th[t], NULL, fn[t], NULL), 0);
    for (int t = 0; t < 3; t++)
        CHECK_EQ(pthread_join(th[t], NULL), 0);
    if (loans)
        CHECK_MSG(from_owner > 0, "no block came from the idle owner's pages");
    else
        CHECK_EQ(from_owner, 0);
    fa_collect();
    size_t live = 0;
    CHECK_GE(fa_heap_visit(count_class, &live), 0);
    CHECK_EQ(live, 0);
    struct fa_stats stats = {.size = sizeof stats};
    CHECK_EQ(fa_stats_get(&stats), 0);
    for (size_t bin = 0; bin < sizeof stats.size_class / sizeof stats.size_class[0]; bin++)
        if (stats.size_class[bin].block_size == SIZE)
            CHECK_EQ(stats.size_class[bin].live, 0);
    printf("block loans %s: ok, %d of %d blocks from the idle owner's pages\n",
           loans ? "on" : "off", from_owner, HELD);
}

int main(int argc, char **argv)
{
    run(fa_option_get("block_loans") == 1);
    if (argc == 1) {
        /* The default is off: on, loans must happen. */
        const char *env[] = {"FITALLOC_BLOCK_LOANS=1", NULL};
        char *args[] = {argv[0], (char *)"--on", NULL};
        fa_test_rerun(env[0], env, args);
    }
    return 0;
}

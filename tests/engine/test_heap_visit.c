/* ctest labels: walk */
/* fa_heap_visit (fitalloc-stats.h) against the fast engine's statistics:
 *   - every live block of the program lies in exactly one visited area, on a block boundary of
 *     a page, or at the start of a large block;
 *   - the sum of used * block_size over pages plus the large blocks' sizes equals
 *     fa_stats.bytes_in_use and covers the bytes requested; after freeing everything, the
 *     pages' used counts drop and the sum drops by at least what was freed;
 *   - with a second thread: its pages are visited with its own owner id and not as the
 *     caller's; once it exits holding blocks, its heap is parked: the pages keep that id, and
 *     a new thread whose first call frees one of the blocks takes the heap (the pages are then
 *     its own, and so are its later frees); with FITALLOC_PARKED_HEAPS=0 (the test runs itself
 *     once each way) the exited thread's pages are visited as abandoned (owner 0);
 *   - a NULL callback is refused. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fitalloc-stats.h"
#include "fitalloc.h"
#include "rerun.h"
#include "threads.h"

#define MAX_AREAS 20000
#define LIVE 1000
#define THREAD_BLOCKS 300

static struct fa_heap_area areas[MAX_AREAS];
static size_t area_count;

static void collect(const struct fa_heap_area *a, void *arg)
{
    (void)arg;
    CHECK(area_count < MAX_AREAS);
    areas[area_count++] = *a;
}

static int by_start(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const struct fa_heap_area *)a)->start;
    uintptr_t y = (uintptr_t)((const struct fa_heap_area *)b)->start;
    return x < y ? -1 : x > y;
}

struct totals {
    uint64_t bytes;      /* used * block_size + large sizes */
    uint64_t page_used;  /* used blocks over all pages */
    uint64_t stats_used; /* fa_stats.bytes_in_use right after the visit */
};

/* Visit, check each area's shape, sort the areas by address (they must not overlap). */
static struct totals visit(void)
{
    area_count = 0;
    int n = fa_heap_visit(collect, NULL);
    struct fa_stats st = {.size = sizeof st};
    CHECK_EQ(fa_stats_get(&st), 0);
    CHECK_EQ((size_t)n, area_count);
    struct totals t = {.stats_used = st.bytes_in_use};
    for (size_t i = 0; i < area_count; i++) {
        const struct fa_heap_area *a = &areas[i];
        if (a->kind == FA_AREA_PAGE) {
            CHECK_GT(a->block_size, 0);
            CHECK(a->used > 0 || a->owner != 0); /* only an owner keeps an empty page */
            CHECK_LE(a->used, a->capacity);
            CHECK_EQ(a->size, a->capacity * a->block_size);
            CHECK(a->owner != 0 || !a->mine);
            t.bytes += a->used * a->block_size;
            t.page_used += a->used;
        } else {
            CHECK_EQ(a->kind, FA_AREA_LARGE);
            CHECK_EQ(a->used, 1);
            CHECK_EQ(a->capacity, 1);
            CHECK_EQ(a->owner, 0);
            CHECK_EQ(a->size, a->block_size);
            t.bytes += a->size;
        }
    }
    qsort(areas, area_count, sizeof areas[0], by_start);
    for (size_t i = 1; i < area_count; i++)
        CHECK_LE((uintptr_t)areas[i - 1].start + areas[i - 1].size, (uintptr_t)areas[i].start);
    return t;
}

/* The area holding p (binary search over the sorted areas), checked to hold it as a block. */
static const struct fa_heap_area *area_of(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    size_t lo = 0, hi = area_count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if ((uintptr_t)areas[mid].start <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    CHECK_MSG(lo > 0, "block %p below every area", p);
    const struct fa_heap_area *found = &areas[lo - 1];
    uintptr_t start = (uintptr_t)found->start;
    CHECK_MSG(a < start + found->size, "block %p in no area", p);
    CHECK_EQ((a - start) % found->block_size, 0);
    return found;
}

/* ---- a second thread ---- */

static void *thread_blocks[THREAD_BLOCKS];
static size_t thread_block_size(int i)
{
    return (size_t)(i % 60) * 16 + 8;
}
/* The holder exits with its blocks: their pages are abandoned. */
static struct fa_test_holder holder = {
    .blocks = thread_blocks, .n = THREAD_BLOCKS, .size = thread_block_size};

/* Started after the holder ended: frees its blocks, the first before anything else. */
static void *successor(void *arg)
{
    uintptr_t heap = (uintptr_t)arg;
    fa_free(thread_blocks[0]);
    visit();
    for (int i = 1; i < THREAD_BLOCKS; i++) {
        const struct fa_heap_area *a = area_of(thread_blocks[i]);
        CHECK(a->mine);
        CHECK_EQ(a->owner, heap);
    }
    for (int i = 1; i < THREAD_BLOCKS; i++)
        fa_free(thread_blocks[i]);
    /* Local frees: none waits in a remote list, still counted by its page's `used`. */
    struct totals t = visit();
    CHECK_EQ(t.bytes, t.stats_used);
    return NULL;
}

static void two_threads(bool parked)
{
    void *mine = fa_malloc(24);
    CHECK_EQ(pthread_barrier_init(&holder.barrier, NULL, 2), 0);
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, fa_test_holder_main, &holder), 0);
    pthread_barrier_wait(&holder.barrier);
    visit();
    const struct fa_heap_area *own = area_of(mine);
    CHECK(own->mine);
    CHECK_NE(own->owner, 0);
    uintptr_t other = 0;
    for (int i = 0; i < THREAD_BLOCKS; i++) {
        const struct fa_heap_area *a = area_of(thread_blocks[i]);
        CHECK(!a->mine);
        CHECK_NE(a->owner, 0);
        CHECK_NE(a->owner, own->owner);
        CHECK(other == 0 || a->owner == other); /* one heap owns all of the thread's pages */
        other = a->owner;
    }
    pthread_barrier_wait(&holder.barrier);
    CHECK_EQ(pthread_join(t, NULL), 0);
    struct totals t1 = visit();
    CHECK_EQ(t1.bytes, t1.stats_used);
    for (int i = 0; i < THREAD_BLOCKS; i++) {
        const struct fa_heap_area *a = area_of(thread_blocks[i]);
        CHECK(!a->mine);
        /* Parked, the heap keeps its pages; abandoned, they have no owner (no thread allocates
         * meanwhile, so none adopts them). */
        CHECK_EQ(a->owner, parked ? other : 0);
    }
    if (parked) {
        /* The successor's first call frees one of the ended thread's blocks. */
        CHECK_EQ(pthread_create(&t, NULL, successor, (void *)other), 0);
        CHECK_EQ(pthread_join(t, NULL), 0);
    } else {
        for (int i = 0; i < THREAD_BLOCKS; i++)
            fa_free(thread_blocks[i]);
    }
    fa_free(mine);
    pthread_barrier_destroy(&holder.barrier);
}

static void count(const struct fa_heap_area *a, void *arg)
{
    (void)a;
    ++*(unsigned *)arg;
}

static int run(bool parked)
{
    static void *live[LIVE];
    static size_t size[LIVE];
    CHECK_EQ(fa_heap_visit(NULL, NULL), -1);

    struct totals t0 = visit();
    CHECK_EQ(t0.bytes, t0.stats_used);

    fa_rng rng;
    fa_rng_seed(&rng, 2024);
    uint64_t requested = 0, block_bytes = 0;
    size_t large = 0;
    for (int i = 0; i < LIVE; i++) {
        /* Mostly small and medium, one in twenty large (above 128 KiB). */
        size[i] = fa_rng_below(&rng, 20) == 0 ? (size_t)200000 + fa_rng_below(&rng, 800000)
                                              : fa_rng_logsize(&rng, 100000);
        live[i] = i % 7 == 0 ? fa_aligned_alloc(256, size[i]) : fa_malloc(size[i]);
        CHECK(live[i] != NULL);
        requested += size[i];
    }
    for (int i = 0; i < LIVE; i += 3) { /* free a third, so pages are partly used */
        fa_free(live[i]);
        requested -= size[i];
        live[i] = NULL;
    }

    struct totals t1 = visit();
    CHECK_EQ(t1.bytes, t1.stats_used);
    CHECK_GE(t1.bytes - t0.bytes, requested);
    for (int i = 0; i < LIVE; i++) {
        if (!live[i])
            continue;
        const struct fa_heap_area *a = area_of(live[i]);
        CHECK_GE(a->block_size, size[i]);
        if (a->kind == FA_AREA_LARGE) {
            CHECK(a->start == live[i]);
            large++;
        } else {
            CHECK(a->mine);
        }
        block_bytes += a->block_size;
    }
    CHECK_GT(large, 0);
    CHECK_GE(t1.bytes - t0.bytes, block_bytes);

    for (int i = 0; i < LIVE; i++)
        fa_free(live[i]);
    struct totals t2 = visit();
    CHECK_EQ(t2.bytes, t2.stats_used);
    CHECK_LT(t2.page_used, t1.page_used);
    CHECK_LE(t2.bytes + block_bytes, t1.bytes);

    two_threads(parked);

    /* A callback that only counts: the visit itself calls nothing else. */
    unsigned calls = 0;
    int n = fa_heap_visit(count, &calls);
    CHECK_EQ((unsigned)n, calls);
    printf("engine/heap_visit: ok (%u areas)\n", calls);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        return run(strcmp(argv[1], "--parked") == 0);
    fa_test_rerun_heap_fates(argv[0]);
    return 0;
}

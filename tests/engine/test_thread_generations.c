/* ctest labels: threads */
/* Generations of worker threads, each leaving its blocks for main to free after the workers
 * have exited (the ECE650 thread tests and larson's hand-off do this).
 *
 * By default an ended thread's heap is parked whole (FITALLOC_PARKED_HEAPS): no segment is
 * abandoned, and the next generation's workers take the parked heaps, with the memory main
 * freed into them, so the address space stays that of one generation.
 *
 * With FITALLOC_PARKED_HEAPS=0 (the test runs itself once each way) the heaps are abandoned, and a
 * heap adopts an abandoned segment only when its own segments have no free page: main's own
 * small allocation between the generations may take at most one of the workers' abandoned
 * segments, and leaves the rest to the next workers. (Adopting greedily, main took every
 * abandoned segment for one 4 KiB block, kept their freed pages, and each new generation mapped
 * new segments: larson's peak RSS doubled.) Checked where it is deterministic: after the first
 * generation, when every abandoned segment still holds live blocks, so the purger cannot
 * reclaim one meanwhile. Every generation checks its data and the memory stays bounded. */
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

#define WORKERS 4
#define BLOCKS 2000 /* about 640 KB each: one segment per worker */
#define GENERATIONS 6
#define SEGMENT ((uint64_t)4 << 20)

static pthread_barrier_t all_started; /* nobody exits before every worker has its segment */
static unsigned char *block[WORKERS][BLOCKS];
static size_t block_n[WORKERS][BLOCKS];

static void *worker(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    fa_rng r;
    fa_rng_seed(&r, 1234 + id);
    for (int i = 0; i < BLOCKS; i++) {
        size_t n = 128 + fa_rng_below(&r, 385); /* 128..512 B, as the ECE650 tests */
        unsigned char *p = fa_malloc(n);
        CHECK(p != NULL);
        memset(p, (int)(id + 1), n);
        block[id][i] = p;
        block_n[id][i] = n;
        if (i == 0)
            pthread_barrier_wait(&all_started);
    }
    return NULL;
}

static struct fa_stats stats_now(void)
{
    struct fa_stats s = {.size = sizeof s};
    CHECK_EQ(fa_stats_get(&s), 0);
    return s;
}

static void generations(bool parked)
{
    uint64_t first_reserved = 0;
    CHECK_EQ(pthread_barrier_init(&all_started, NULL, WORKERS), 0);
    for (int g = 0; g < GENERATIONS; g++) {
        pthread_t th[WORKERS];
        for (uintptr_t t = 0; t < WORKERS; t++)
            CHECK_EQ(pthread_create(&th[t], NULL, worker, (void *)t), 0);
        for (int t = 0; t < WORKERS; t++)
            CHECK_EQ(pthread_join(th[t], NULL), 0);
        uint64_t abandoned_before = stats_now().abandoned;
        /* main allocates a little of its own between generations: a size the workers never
         * used, so no abandoned segment has a page for it */
        char *note = fa_malloc(4096);
        CHECK(note != NULL);
        snprintf(note, 4096, "generation %d", g);
        uint64_t abandoned_after = stats_now().abandoned;
        printf("%s, generation %d: abandoned segments %llu -> %llu\n",
               parked ? "parked" : "abandoned", g, (unsigned long long)abandoned_before,
               (unsigned long long)abandoned_after);
        if (parked) {
            CHECK_EQ(abandoned_before, 0);
        } else if (g == 0) {
            CHECK(abandoned_before >= WORKERS);
            CHECK(abandoned_after + 1 >= abandoned_before);
        }
        for (int t = 0; t < WORKERS; t++)
            for (int i = 0; i < BLOCKS; i++) {
                CHECK_EQ(block[t][i][0], (unsigned char)(t + 1));
                CHECK_EQ(block[t][i][block_n[t][i] - 1], (unsigned char)(t + 1));
                fa_free(block[t][i]);
            }
        fa_free(note);
        uint64_t reserved = stats_now().reserved;
        if (g == 0)
            first_reserved = reserved;
        /* bounded, not growing with the generations; with parked heaps, each generation's
         * workers reuse the first one's segments (but for one: a main without a heap of its
         * own yet takes a parked one for its note) */
        CHECK(reserved <= first_reserved + (parked ? SEGMENT : 2 * WORKERS * SEGMENT));
    }
    pthread_barrier_destroy(&all_started);
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        bool parked = strcmp(argv[1], "--parked") == 0;
        CHECK_EQ(fa_option_get("parked_heaps") >= WORKERS, parked);
        generations(parked);
        return 0;
    }
    fa_test_rerun_heap_fates(argv[0]);
    return 0;
}

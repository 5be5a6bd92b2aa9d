/* Generations of worker threads, each filling the heap with blocks that main frees after the
 * workers have exited (the ECE650 thread tests and larson's hand-off do this). The memory of
 * one generation must serve the next: once the first generation has run, later ones may not
 * map more than a segment or two. (Before adoption waited for a real need, main adopted every
 * abandoned segment for its own few allocations and each new generation mapped new ones.) */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fitalloc.h"
#include "fitalloc-stats.h"

#define WORKERS 4
#define BLOCKS 10000
#define GENERATIONS 6
#define SEGMENT ((uint64_t)4 << 20)

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
    }
    return NULL;
}

static uint64_t reserved_now(void)
{
    struct fa_stats s = {.size = sizeof s};
    CHECK_EQ(fa_stats_get(&s), 0);
    return s.reserved;
}

int main(void)
{
    uint64_t after_first = 0;
    for (int g = 0; g < GENERATIONS; g++) {
        pthread_t th[WORKERS];
        for (uintptr_t t = 0; t < WORKERS; t++)
            CHECK_EQ(pthread_create(&th[t], NULL, worker, (void *)t), 0);
        for (int t = 0; t < WORKERS; t++)
            CHECK_EQ(pthread_join(th[t], NULL), 0);
        /* main allocates a little of its own between generations */
        char *note = fa_malloc(4096);
        CHECK(note != NULL);
        snprintf(note, 4096, "generation %d", g);
        for (int t = 0; t < WORKERS; t++)
            for (int i = 0; i < BLOCKS; i++) {
                CHECK_EQ(block[t][i][0], (unsigned char)(t + 1));
                CHECK_EQ(block[t][i][block_n[t][i] - 1], (unsigned char)(t + 1));
                fa_free(block[t][i]);
            }
        fa_free(note);
        uint64_t reserved = reserved_now();
        printf("generation %d: reserved %llu MiB\n", g, (unsigned long long)(reserved >> 20));
        if (g == 0)
            after_first = reserved;
        else
            CHECK(reserved <= after_first + 2 * SEGMENT);
    }
    return 0;
}

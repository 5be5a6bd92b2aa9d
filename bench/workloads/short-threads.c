/* short-threads: many short-lived threads.
 *
 * Waves of 4 threads, one wave after the other. Thread k of a wave first checks and frees the
 * 32 blocks that thread k of the previous wave left behind (their owner is dead), then
 * allocates 64 blocks of 16..2048 B, frees every other one and leaves the rest for its
 * successor. So every thread's heap is set up, used a little and torn down, and half of its
 * blocks outlive it. Main frees the last wave's blocks. Waves: smoke 500 (2,000 threads), real
 * (= full) 2,500.
 *
 * usage: short-threads --size smoke|real|full  prints: threads, ok short-threads <checksum>
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/args.h"
#include "lib/pattern.h"
#include "lib/threads.h"

#define USAGE "short-threads --size smoke|real|full"
#define THREADS 4
#define BLOCKS 64
#define KEPT (BLOCKS / 2)

struct block {
    void *p;
    size_t n;
    uint64_t tag;
};

struct lane {
    int id;
    long wave;
    uint64_t sum;
    struct block left[KEPT]; /* left by the previous thread of this lane */
};

static struct lane lanes[THREADS];

static uint64_t check_free(struct block *b)
{
    tagged_free(b->p, b->n, b->tag);
    b->p = NULL;
    return b->n;
}

static void *worker(void *arg)
{
    struct lane *l = arg;
    for (int i = 0; i < KEPT; i++)
        if (l->left[i].p)
            l->sum += check_free(&l->left[i]);
    struct block mine[BLOCKS];
    for (int i = 0; i < BLOCKS; i++) {
        uint64_t tag = mix64(((uint64_t)l->wave << 20) ^ ((uint64_t)l->id << 12) ^ (uint64_t)i);
        mine[i].n = 16 + (size_t)(tag % 2033);
        mine[i].tag = tag;
        mine[i].p = tagged_malloc(mine[i].n, tag);
    }
    for (int i = 0; i < BLOCKS; i++) {
        if (i % 2)
            l->sum += check_free(&mine[i]);
        else
            l->left[i / 2] = mine[i];
    }
    return NULL;
}

int main(int argc, char **argv)
{
    enum bench_size size = bench_parse(argc, argv, USAGE, NULL);
    long waves = size == BENCH_SMOKE ? 500 : 2500;
    for (int k = 0; k < THREADS; k++)
        lanes[k].id = k;
    for (long w = 0; w < waves; w++) {
        for (int k = 0; k < THREADS; k++)
            lanes[k].wave = w;
        run_threads(THREADS, worker, lanes, sizeof lanes[0]);
    }
    uint64_t sum = 0;
    for (int k = 0; k < THREADS; k++) {
        for (int i = 0; i < KEPT; i++)
            if (lanes[k].left[i].p)
                lanes[k].sum += check_free(&lanes[k].left[i]);
        sum = mix64(sum ^ lanes[k].sum);
    }
    printf("threads %ld\nok short-threads %016llx\n", waves * THREADS, (unsigned long long)sum);
    return 0;
}

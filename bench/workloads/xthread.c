/* xthread: cross-thread producer/consumer frees.
 *
 * Producer/consumer pairs: --threads N runs N/2 pairs (N even, default 4: 2 pairs). A
 * producer allocates batches of 1024 blocks of 16..512 bytes, writes a pattern into each, and
 * hands the batch (itself a malloc'd array) to its consumer through a lock-protected ring of 8
 * batches. The consumer checks every block and frees it, and frees the batch: every free
 * happens on a thread other than the allocating one.
 * Batches per pair: smoke 3,500, real (= full) 40,000, but at least 7,000 / 80,000 in all: a
 * single pair does twice as many, so that it too runs well over process start.
 *
 * usage: xthread --size smoke|real|full [--threads N]   prints: ok xthread <checksum>
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/args.h"
#include "lib/pattern.h"

#define USAGE "xthread --size smoke|real|full [--threads N (even, 2..64, default 4)]"
#define MAX_PAIRS 32
#define BATCH 1024
#define RING 8

struct batch {
    uint64_t first_seq;
    unsigned char *p[BATCH];
};

struct pair {
    pthread_mutex_t m;
    pthread_cond_t not_full, not_empty;
    struct batch *q[RING];
    int head, count;
    int id;
    uint64_t nbatches;
    uint64_t sum;
};

/* The tag and size of block `seq` of pair `id`: both sides compute them. */
static uint64_t tag_of(int id, uint64_t seq)
{
    return mix64(((uint64_t)id << 48) ^ seq);
}
static size_t size_of(uint64_t tag)
{
    return 16 + (size_t)((tag >> 17) % 497);
}

static void *producer(void *arg)
{
    struct pair *pr = arg;
    for (uint64_t b = 0; b < pr->nbatches; b++) {
        struct batch *bt = malloc(sizeof *bt);
        if (!bt) {
            fprintf(stderr, "xthread: malloc(batch) failed\n");
            exit(1);
        }
        bt->first_seq = b * BATCH;
        for (int i = 0; i < BATCH; i++) {
            uint64_t tag = tag_of(pr->id, bt->first_seq + i);
            size_t n = size_of(tag);
            unsigned char *p = expect_block(malloc(n), "malloc", n, 16);
            block_fill(p, n, tag);
            bt->p[i] = p;
        }
        pthread_mutex_lock(&pr->m);
        while (pr->count == RING)
            pthread_cond_wait(&pr->not_full, &pr->m);
        pr->q[(pr->head + pr->count) % RING] = bt;
        pr->count++;
        pthread_cond_signal(&pr->not_empty);
        pthread_mutex_unlock(&pr->m);
    }
    return NULL;
}

static void *consumer(void *arg)
{
    struct pair *pr = arg;
    uint64_t sum = 0;
    for (uint64_t b = 0; b < pr->nbatches; b++) {
        pthread_mutex_lock(&pr->m);
        while (pr->count == 0)
            pthread_cond_wait(&pr->not_empty, &pr->m);
        struct batch *bt = pr->q[pr->head];
        pr->head = (pr->head + 1) % RING;
        pr->count--;
        pthread_cond_signal(&pr->not_full);
        pthread_mutex_unlock(&pr->m);
        if (bt->first_seq != b * BATCH) {
            fprintf(stderr, "xthread: CORRUPTION: batch %llu has first_seq %llu\n",
                    (unsigned long long)b, (unsigned long long)bt->first_seq);
            exit(1);
        }
        for (int i = 0; i < BATCH; i++) {
            uint64_t tag = tag_of(pr->id, bt->first_seq + i);
            sum += block_check(bt->p[i], size_of(tag), tag);
            free(bt->p[i]);
        }
        free(bt);
    }
    pr->sum = sum;
    return NULL;
}

int main(int argc, char **argv)
{
    static const char *const keys[] = {"--threads", NULL};
    /* full: these shapes have no original size, so full = real */
    int real = bench_parse(argc, argv, USAGE, keys) != BENCH_SMOKE;
    long threads = bench_opt_long(argc, argv, "--threads", 4, USAGE);
    if (threads < 2 || threads > 2 * MAX_PAIRS || threads % 2)
        bench_usage(USAGE);
    int npairs = (int)(threads / 2);
    uint64_t nbatches = (real ? 40000 : 3500) * (npairs == 1 ? 2 : 1); /* per pair */
    static struct pair pairs[MAX_PAIRS];
    pthread_t th[2 * MAX_PAIRS];

    for (int k = 0; k < npairs; k++) {
        struct pair *pr = &pairs[k];
        pthread_mutex_init(&pr->m, NULL);
        pthread_cond_init(&pr->not_full, NULL);
        pthread_cond_init(&pr->not_empty, NULL);
        pr->id = k;
        pr->nbatches = nbatches;
    }
    for (int k = 0; k < npairs; k++) {
        if (pthread_create(&th[2 * k], NULL, consumer, &pairs[k]) ||
            pthread_create(&th[2 * k + 1], NULL, producer, &pairs[k])) {
            fprintf(stderr, "xthread: pthread_create failed\n");
            return 1;
        }
    }
    uint64_t sum = 0;
    for (int i = 0; i < 2 * npairs; i++)
        pthread_join(th[i], NULL);
    for (int k = 0; k < npairs; k++)
        sum += pairs[k].sum;
    printf("ok xthread %016llx\n", (unsigned long long)sum);
    return 0;
}

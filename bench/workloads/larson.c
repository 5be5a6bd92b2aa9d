/* larson: server-style churn with thread hand-off (after Larson and Krishnan's benchmark).
 *
 * Chains of threads (--threads N chains, default 4), each chain owning 1,000 slots. A thread
 * replaces the block in a random slot STEPS times (sizes 16..1024 B, uniform), then starts its
 * successor, hands it the slots and exits: like a server whose worker threads come and go, the
 * successor frees blocks that a thread which no longer exists allocated. Each thread first
 * joins its predecessor. When the chains are done main checks and frees what is left. Every
 * block carries a tag checked before it is freed.
 * Generations x steps per chain at the default 4 chains: smoke 250 x 25,000, real (= full)
 * 1,250 x 50,000. The generations are split between the chains (smoke 1,000, real 5,000 in
 * all), so every chain count does the same work: larson:8 runs 8 threads on 2 cores,
 * oversubscribed.
 *
 * usage: larson --size smoke|real|full [--threads N]
 * prints: ops, ops_per_s, ok larson <checksum>
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/args.h"
#include "lib/pattern.h"
#include "lib/timing.h"

#define USAGE "larson --size smoke|real|full [--threads N (chains, 1..64, default 4)]"
#define MAX_CHAINS 64
#define SLOTS 1000
#define MIN_SIZE 16
#define MAX_SIZE 1024

struct block {
    unsigned char *p;
    size_t n;
    uint64_t tag;
};

struct chain {
    int id;
    int generations_left;
    long steps;
    uint64_t rng, next_tag, sum;
    pthread_t previous; /* the thread to join: the one that handed the slots over */
    int has_previous;
    struct block slot[SLOTS];
};

static struct chain chains[MAX_CHAINS];
static sem_t chain_done;

static void *worker(void *arg)
{
    struct chain *c = arg;
    if (c->has_previous)
        pthread_join(c->previous, NULL);
    for (long i = 0; i < c->steps; i++) {
        uint64_t r = mix64(c->rng++);
        struct block *b = &c->slot[r % SLOTS];
        if (b->p) {
            c->sum += b->n;
            tagged_free(b->p, b->n, b->tag);
        }
        b->n = MIN_SIZE + (size_t)((r >> 32) % (MAX_SIZE - MIN_SIZE + 1));
        b->tag = mix64(((uint64_t)c->id << 56) ^ c->next_tag++);
        b->p = tagged_malloc(b->n, b->tag);
    }
    if (--c->generations_left == 0) {
        c->previous = pthread_self();
        sem_post(&chain_done);
        return NULL;
    }
    /* Hand the slots to a new thread; it joins this one. */
    c->previous = pthread_self();
    c->has_previous = 1;
    pthread_t next;
    if (pthread_create(&next, NULL, worker, c)) {
        fprintf(stderr, "larson: pthread_create failed\n");
        exit(1);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    static const char *const keys[] = {"--threads", NULL};
    enum bench_size size = bench_parse(argc, argv, USAGE, keys);
    long nchains = bench_opt_long(argc, argv, "--threads", 4, USAGE);
    if (nchains < 1 || nchains > MAX_CHAINS)
        bench_usage(USAGE);
    int generations = (size == BENCH_SMOKE ? 1000 : 5000) / (int)nchains;
    if (generations < 1)
        generations = 1;
    long steps = size == BENCH_SMOKE ? 25000 : 50000;

    sem_init(&chain_done, 0, 0);
    double t0 = now_s();
    for (int k = 0; k < nchains; k++) {
        struct chain *c = &chains[k];
        c->id = k;
        c->generations_left = generations;
        c->steps = steps;
        c->rng = 0x51ed2701ULL * (uint64_t)(k + 1);
        pthread_t first;
        if (pthread_create(&first, NULL, worker, c)) {
            fprintf(stderr, "larson: pthread_create failed\n");
            return 1;
        }
    }
    for (int k = 0; k < nchains; k++)
        sem_wait(&chain_done);
    double elapsed = now_s() - t0;
    uint64_t sum = 0;
    for (int k = 0; k < nchains; k++) {
        struct chain *c = &chains[k];
        pthread_join(c->previous, NULL); /* the last thread of the chain */
        for (int i = 0; i < SLOTS; i++)
            if (c->slot[i].p)
                tagged_free(c->slot[i].p, c->slot[i].n, c->slot[i].tag);
        sum = mix64(sum ^ c->sum);
    }
    long ops = nchains * generations * steps;
    printf("ops %ld\nops_per_s %.0f\n", ops, (double)ops / elapsed);
    printf("ok larson %016llx\n", (unsigned long long)sum);
    return 0;
}

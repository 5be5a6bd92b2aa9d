/* threads: many threads churning private small blocks (larson-like).
 *
 * 8 threads (on however many cores there are) each own 2,000 slots and
 * replace a random slot per step with a new block of 16..256 bytes (skewed
 * small). One freed block in 32 is instead handed to another random thread's
 * mailbox (lock-protected, bounded); each thread checks and frees what is in
 * its mailbox every 256 steps. Like larson, the run is split into rounds: the
 * threads exit after each round and fresh threads inherit their slots, so
 * blocks outlive the thread that allocated them. Main frees what is left.
 *
 * usage: threads --size smoke|real|full   prints: ok threads <checksum>
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/args.h"
#include "lib/pattern.h"
#include "lib/threads.h"

#define USAGE "threads --size smoke|real|full"
#define NTHREADS 8
#define SLOTS 2000
#define MAILCAP 1024
#define HANDOFF_ONE_IN 32
#define DRAIN_EVERY 256

struct block {
    unsigned char *p;
    size_t n;
    uint64_t tag;
};

struct mailbox {
    pthread_mutex_t m;
    int count;
    struct block items[MAILCAP];
};

struct worker {
    int id;
    uint64_t rng; /* persists across rounds: deterministic per worker */
    uint64_t next_tag;
    uint64_t steps; /* per round */
    uint64_t sum;
    struct block slot[SLOTS];
};

static struct mailbox mbox[NTHREADS];
static struct worker workers[NTHREADS];

static uint64_t wrng(struct worker *w)
{
    return mix64(w->rng++);
}

/* 16..256: [16,32] p=1/2, (32,64] 1/4, (64,128] 1/8, (128,256] 1/8. */
static size_t rand_size(uint64_t r)
{
    int band = __builtin_ctzll(r | (1ULL << 3)); /* 0..3 */
    size_t lo = band == 0 ? 16 : (size_t)16 << band;
    size_t hi = (size_t)32 << band;
    return lo + (size_t)((r >> 8) % (hi - lo + 1));
}

static uint64_t drain(int id)
{
    static _Thread_local struct block local[MAILCAP];
    struct mailbox *mb = &mbox[id];
    pthread_mutex_lock(&mb->m);
    int n = mb->count;
    memcpy(local, mb->items, (size_t)n * sizeof local[0]);
    mb->count = 0;
    pthread_mutex_unlock(&mb->m);
    uint64_t sum = 0;
    for (int i = 0; i < n; i++) {
        sum += block_check(local[i].p, local[i].n, local[i].tag);
        free(local[i].p);
    }
    return sum;
}

static void *run(void *arg)
{
    struct worker *w = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < w->steps; i++) {
        uint64_t r = wrng(w);
        struct block *b = &w->slot[r % SLOTS];
        if (b->p) {
            int handed = 0;
            if (((r >> 32) % HANDOFF_ONE_IN) == 0) {
                int to = (w->id + 1 + (int)((r >> 40) % (NTHREADS - 1))) % NTHREADS;
                struct mailbox *mb = &mbox[to];
                pthread_mutex_lock(&mb->m);
                if (mb->count < MAILCAP) {
                    mb->items[mb->count++] = *b;
                    handed = 1;
                }
                pthread_mutex_unlock(&mb->m);
            }
            if (!handed) {
                sum += block_check(b->p, b->n, b->tag);
                free(b->p);
            }
        }
        size_t n = rand_size(wrng(w));
        unsigned char *p = expect_block(malloc(n), "malloc", n, 16);
        b->p = p;
        b->n = n;
        b->tag = mix64(((uint64_t)w->id << 56) ^ w->next_tag++);
        block_fill(p, n, b->tag);
        if ((i % DRAIN_EVERY) == DRAIN_EVERY - 1)
            sum += drain(w->id);
    }
    sum += drain(w->id);
    w->sum += sum;
    return NULL;
}

int main(int argc, char **argv)
{
    /* full: these shapes have no original size, so full = real */
    int real = bench_parse(argc, argv, USAGE, NULL) != BENCH_SMOKE;
    int rounds = real ? 30 : 8;
    uint64_t steps = real ? 500000 : 240000; /* per thread per round */

    for (int t = 0; t < NTHREADS; t++) {
        pthread_mutex_init(&mbox[t].m, NULL);
        workers[t].id = t;
        workers[t].rng = 0x9e3779b9ULL * (uint64_t)(t + 1);
        workers[t].next_tag = 1;
        workers[t].steps = steps;
    }
    for (int r = 0; r < rounds; r++) {
        run_threads(NTHREADS, run, workers, sizeof workers[0]);
    }
    /* Main thread frees everything still live: slots and mailboxes. */
    uint64_t sum = 0;
    for (int t = 0; t < NTHREADS; t++) {
        sum += workers[t].sum + drain(t);
        for (int i = 0; i < SLOTS; i++) {
            struct block *b = &workers[t].slot[i];
            if (b->p) {
                sum += block_check(b->p, b->n, b->tag);
                free(b->p);
            }
        }
    }
    printf("ok threads %016llx\n", (unsigned long long)sum);
    return 0;
}

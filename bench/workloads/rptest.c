/* rptest: mixed sizes with frequent cross-thread frees (after rpmalloc's benchmark).
 *
 * N threads (--threads, default 2). In each round a thread allocates a batch of 64 blocks of
 * 8 B..16 KiB (log-uniform: every octave as likely) and writes a tag into each; it keeps one
 * block in 4 in a ring of its own, freed locally 64 rounds later, and sends the other three
 * in 4 to random other threads: a batch per receiver, pushed onto the receiver's inbox (a
 * lock-free stack). Every round each thread also takes its whole inbox, checks each block and
 * frees it. So most blocks are freed by a thread other than the one that allocated them, some
 * by their own thread, and blocks of every size go both ways. A batch carries a hash of its
 * contents, checked before the receiver follows any pointer in it.
 * The total work is the same at every thread count (it is split between the threads), so
 * rptest:2 and rptest:8 can be compared. Every SYNC_EVERY rounds the threads meet at a
 * barrier. WHY: with more threads than cores (or on a busy machine) a running thread would
 * otherwise fill the inboxes of the threads that are not running without bound; the barrier
 * bounds the blocks in flight by sleeping, so the time is not spent spinning.
 * Blocks per run: smoke 6.4M, real (= full) 64M.
 *
 * usage: rptest --size smoke|real|full [--threads N]   prints: ok rptest <checksum>
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/args.h"
#include "lib/pattern.h"

#define USAGE "rptest --size smoke|real|full [--threads N (1..64, default 2)]"
#define MAX_THREADS 64
#define BATCH 64
#define KEEP_ONE_IN 4
#define KEEP_ROUNDS 64 /* a kept block is freed this many rounds later */
#define SYNC_EVERY 32  /* rounds between two barriers */
#define MIN_LOG 3      /* 8 B */
#define MAX_LOG 14     /* 16 KiB */

struct block {
    unsigned char *p;
    size_t n;
    uint64_t tag;
};

/* Blocks on their way to another thread. */
struct parcel {
    uint64_t seal; /* parcel_hash() of the rest */
    struct parcel *next;
    int count;
    struct block b[BATCH];
};

struct worker {
    int id;
    uint64_t rounds;
    uint64_t rng, next_tag, sum;
    _Atomic(struct parcel *) inbox;
    struct block kept[KEEP_ROUNDS][BATCH / KEEP_ONE_IN];
    char pad[64];
};

/* WHY static and not malloc'd: the inboxes must survive a broken allocator long enough for
 * the checks to report it. */
static struct worker workers[MAX_THREADS];
static int nthreads;
static pthread_barrier_t sync_point;

static void fatal(const char *what)
{
    fprintf(stderr, "rptest: %s\n", what);
    exit(1);
}

/* Log-uniform in [8 B, 16 KiB]: a random octave [2^k, 2^(k+1)), then uniform inside it. */
static size_t rand_size(uint64_t r)
{
    unsigned k = MIN_LOG + (unsigned)(r % (MAX_LOG - MIN_LOG));
    size_t lo = (size_t)1 << k;
    return lo + (size_t)((r >> 8) % (lo + 1));
}

/* A cheap hash of a parcel's link and blocks (one multiply per word). */
static uint64_t parcel_hash(const struct parcel *pc)
{
    const uint64_t k = 0x100000001b3ULL;
    uint64_t h = ((uint64_t)(uintptr_t)pc->next ^ (uint64_t)pc->count) * k;
    for (int i = 0; i < pc->count; i++) {
        h = (h ^ (uint64_t)(uintptr_t)pc->b[i].p) * k;
        h = (h ^ pc->b[i].n) * k;
        h = (h ^ pc->b[i].tag) * k;
    }
    return mix64(h);
}

static void check_free(struct worker *w, const struct block *b)
{
    if (!tag_ok(b->p, b->n, b->tag))
        corruption("block overwritten", b->tag, b->n, 0);
    w->sum += mix64(b->tag ^ b->n);
    free(b->p);
}

/* Take the whole inbox, check and free every block in it. */
static void drain(struct worker *w)
{
    struct parcel *pc = atomic_exchange_explicit(&w->inbox, NULL, memory_order_acquire);
    while (pc) {
        /* WHY a copy: a broken allocator may hand the parcel's memory to another thread while
         * we read it; the copy is checked once and then cannot change. */
        struct parcel got;
        got.seal = pc->seal;
        got.next = pc->next;
        got.count = pc->count;
        if (got.count < 1 || got.count > BATCH)
            corruption("parcel overwritten", got.seal, sizeof *pc, 0);
        memcpy(got.b, pc->b, (size_t)got.count * sizeof got.b[0]);
        if (got.seal != parcel_hash(&got))
            corruption("parcel overwritten", got.seal, sizeof *pc, 0);
        free(pc); /* the parcel too was allocated by the sender */
        for (int i = 0; i < got.count; i++)
            check_free(w, &got.b[i]);
        pc = got.next;
    }
}

/* Blocks gathered for one receiver during a round. */
struct outgoing {
    int count;
    struct block b[BATCH];
};

/* Put the blocks in a parcel (WHY only now: what a broken allocator gives out may change under
 * us, so the blocks are gathered elsewhere) and push it onto the receiver's inbox. */
static void send(int to, const struct outgoing *o)
{
    struct parcel *pc = malloc(sizeof *pc);
    if (!pc)
        fatal("malloc(parcel) failed");
    pc->count = o->count;
    memcpy(pc->b, o->b, (size_t)o->count * sizeof o->b[0]);
    struct worker *dst = &workers[to];
    pc->next = atomic_load_explicit(&dst->inbox, memory_order_relaxed);
    do /* a failed exchange changes pc->next: seal again */
        pc->seal = parcel_hash(pc);
    while (!atomic_compare_exchange_weak_explicit(&dst->inbox, &pc->next, pc, memory_order_release,
                                                  memory_order_relaxed));
}

static void *run(void *arg)
{
    struct worker *w = arg;
    struct outgoing out[MAX_THREADS]; /* on this thread's stack */
    for (int t = 0; t < nthreads; t++)
        out[t].count = 0;
    for (uint64_t round = 0; round < w->rounds; round++) {
        struct block *keep = w->kept[round % KEEP_ROUNDS];
        if (round >= KEEP_ROUNDS)
            for (int i = 0; i < BATCH / KEEP_ONE_IN; i++)
                check_free(w, &keep[i]);
        for (int i = 0; i < BATCH; i++) {
            uint64_t r = mix64(w->rng++);
            struct block b = {.n = rand_size(r)};
            b.tag = mix64(((uint64_t)w->id << 48) ^ w->next_tag++);
            b.p = malloc(b.n);
            if (!b.p)
                fatal("malloc failed");
            tag_write(b.p, b.n, b.tag);
            if (i % KEEP_ONE_IN == 0) {
                keep[i / KEEP_ONE_IN] = b;
                continue;
            }
            if (nthreads == 1) { /* nobody to send it to */
                check_free(w, &b);
                continue;
            }
            /* a random other thread */
            int to = (int)((r >> 40) % (uint64_t)(nthreads - 1));
            to += to >= w->id;
            out[to].b[out[to].count++] = b;
        }
        for (int t = 0; t < nthreads; t++)
            if (out[t].count) {
                send(t, &out[t]);
                out[t].count = 0;
            }
        drain(w);
        if ((round + 1) % SYNC_EVERY == 0)
            pthread_barrier_wait(&sync_point);
    }
    for (uint64_t k = 0; k < KEEP_ROUNDS && k < w->rounds; k++)
        for (int i = 0; i < BATCH / KEEP_ONE_IN; i++)
            check_free(w, &w->kept[k][i]);
    /* Every thread has the same rounds: after this barrier nobody sends any more. */
    pthread_barrier_wait(&sync_point);
    drain(w);
    return NULL;
}

int main(int argc, char **argv)
{
    static const char *const keys[] = {"--threads", NULL};
    int real = bench_parse(argc, argv, USAGE, keys) != BENCH_SMOKE;
    long n = bench_opt_long(argc, argv, "--threads", 2, USAGE);
    if (n < 1 || n > MAX_THREADS)
        bench_usage(USAGE);
    nthreads = (int)n;
    /* the same total work at every thread count */
    const uint64_t total_rounds = real ? 1000000 : 100000;

    pthread_t th[MAX_THREADS];
    pthread_barrier_init(&sync_point, NULL, (unsigned)nthreads);
    for (int t = 0; t < nthreads; t++) {
        struct worker *w = &workers[t];
        w->id = t;
        w->rounds = total_rounds / (uint64_t)nthreads;
        w->rng = 0x2b7e151628aed2a6ULL * (uint64_t)(t + 1);
        atomic_init(&w->inbox, NULL);
    }
    for (int t = 0; t < nthreads; t++)
        if (pthread_create(&th[t], NULL, run, &workers[t]))
            fatal("pthread_create failed");
    uint64_t sum = 0;
    for (int t = 0; t < nthreads; t++) {
        pthread_join(th[t], NULL);
        sum += workers[t].sum;
    }
    printf("ok rptest %016llx\n", (unsigned long long)sum);
    return 0;
}

/* ctest labels: threads */
/* Producer/consumer: producers allocate and fill blocks, consumers on other
 * threads verify, sometimes realloc, and free them. Afterwards the statistics
 * must show every one of those allocations freed again. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fitalloc.h"

#define PRODUCERS 2
#define CONSUMERS 2
#define QCAP 1024
#define MIB ((size_t)1 << 20)

typedef struct {
    unsigned char *p;
    size_t n;
    uint64_t id;
} item;

static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qnotempty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t qnotfull = PTHREAD_COND_INITIALIZER;
static item queue[QCAP];
static unsigned qhead, qcount, producers_left;
static pthread_barrier_t barrier;
static unsigned long per_producer;
static unsigned long consumed[CONSUMERS];

static void push(item it)
{
    pthread_mutex_lock(&qlock);
    while (qcount == QCAP)
        pthread_cond_wait(&qnotfull, &qlock);
    queue[(qhead + qcount) % QCAP] = it;
    qcount++;
    pthread_cond_signal(&qnotempty);
    pthread_mutex_unlock(&qlock);
}

/* returns 0 when all producers are done and the queue is empty */
static int pop(item *it)
{
    pthread_mutex_lock(&qlock);
    while (qcount == 0 && producers_left > 0)
        pthread_cond_wait(&qnotempty, &qlock);
    if (qcount == 0) {
        pthread_mutex_unlock(&qlock);
        return 0;
    }
    *it = queue[qhead];
    qhead = (qhead + 1) % QCAP;
    qcount--;
    pthread_cond_signal(&qnotfull);
    pthread_mutex_unlock(&qlock);
    return 1;
}

static void *producer(void *arg)
{
    int t = (int)(intptr_t)arg;
    fa_rng r;
    fa_rng_seed(&r, 100 + (uint64_t)t);
    pthread_barrier_wait(&barrier);
    for (unsigned long i = 0; i < per_producer; i++) {
        item it;
        unsigned kind = (unsigned)fa_rng_below(&r, 1000);
        if (kind == 0)
            it.n = MIB + (size_t)fa_rng_below(&r, MIB); /* large */
        else if (kind < 50)
            it.n = (size_t)fa_rng_below(&r, 17);
        else
            it.n = fa_rng_logsize(&r, 65536);
        it.id = ((uint64_t)t << 40) | i;
        if (kind % 7 == 0)
            it.p = (unsigned char *)fa_calloc(1, it.n);
        else if (kind % 11 == 0)
            it.p = (unsigned char *)fa_aligned_alloc(64, it.n);
        else
            it.p = (unsigned char *)fa_malloc(it.n);
        CHECK(it.p != NULL);
        fa_pattern_fill(it.p, it.n, it.id);
        push(it);
    }
    pthread_mutex_lock(&qlock);
    producers_left--;
    pthread_cond_broadcast(&qnotempty);
    pthread_mutex_unlock(&qlock);
    return NULL;
}

static void *consumer(void *arg)
{
    int t = (int)(intptr_t)arg;
    fa_rng r;
    fa_rng_seed(&r, 200 + (uint64_t)t);
    pthread_barrier_wait(&barrier);
    item it;
    while (pop(&it)) {
        CHECK_PATTERN(it.p, it.n, it.id);
        unsigned k = (unsigned)fa_rng_below(&r, 8);
        if (k == 0) {
            size_t nn = fa_rng_logsize(&r, 65536);
            unsigned char *q = (unsigned char *)fa_realloc(it.p, nn);
            CHECK(q != NULL);
            CHECK_PATTERN(q, it.n < nn ? it.n : nn, it.id);
            fa_free(q);
        } else if (k < 4) {
            fa_free_sized(it.p, it.n);
        } else {
            fa_free(it.p);
        }
        consumed[t]++;
    }
    return NULL;
}

int main(void)
{
    unsigned scale = fa_test_scale();
    per_producer = 60000ul * scale;
    if (FA_TEST_TSAN)
        per_producer /= 4;
    producers_left = PRODUCERS;
    CHECK_EQ(pthread_barrier_init(&barrier, NULL, PRODUCERS + CONSUMERS), 0);

    struct fa_stats s0, s1;
    s0.size = s1.size = sizeof s0;
    CHECK_EQ(fa_stats_get(&s0), 0);

    pthread_t th[PRODUCERS + CONSUMERS];
    for (int i = 0; i < PRODUCERS; i++)
        CHECK_EQ(pthread_create(&th[i], NULL, producer, (void *)(intptr_t)i), 0);
    for (int i = 0; i < CONSUMERS; i++)
        CHECK_EQ(pthread_create(&th[PRODUCERS + i], NULL, consumer, (void *)(intptr_t)i), 0);
    for (int i = 0; i < PRODUCERS + CONSUMERS; i++)
        CHECK_EQ(pthread_join(th[i], NULL), 0);

    CHECK_EQ(fa_stats_get(&s1), 0);
    unsigned long total = 0;
    for (int i = 0; i < CONSUMERS; i++)
        total += consumed[i];
    CHECK_EQ(total, per_producer * PRODUCERS);
    CHECK_EQ(qcount, 0);

    unsigned long long da = s1.allocs - s0.allocs, df = s1.frees - s0.frees;
    printf("produced %lu, stats: allocs +%llu, frees +%llu, bytes_in_use %llu -> %llu\n", total, da,
           df, (unsigned long long)s0.bytes_in_use, (unsigned long long)s1.bytes_in_use);
    CHECK_GE(da, total);
    CHECK_GE(df, total);
#if FA_TEST_SANITIZED
    /* only fa_* calls reach fitalloc: the books must balance exactly */
    CHECK_EQ(da, df);
    CHECK_EQ(s1.bytes_in_use, s0.bytes_in_use);
#else
    /* libc's own (pthread) allocations also count here: allow a little */
    CHECK_SLE((long long)da - (long long)df, 64);
    CHECK_SLE((long long)s1.bytes_in_use - (long long)s0.bytes_in_use, 256 * 1024);
#endif
    CHECK_EQ(pthread_barrier_destroy(&barrier), 0);
    printf("engine/cross_free: ok\n");
    return 0;
}

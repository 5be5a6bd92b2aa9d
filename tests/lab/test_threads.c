/* Every lock mode under concurrent stress (run under TSan too):
 *   - churn: 4 threads allocate, fill, verify and free blocks; a third of them travel through a
 *     shared queue and are freed by another thread (cross-thread frees), some are resized by
 *     the thread that frees them;
 *   - the ECE650 thread_test: 4 threads allocate concurrently and no two live blocks overlap.
 * Afterwards every allocation is accounted for as freed and every heap passes the checker. */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lab/threads/lab_instance.h"
#include "check.h"

#define THREADS 4
#define QCAP 512

struct item {
    unsigned char *p;
    size_t n;
    uint64_t id;
};

static struct {
    pthread_mutex_t lock;
    struct item q[QCAP];
    unsigned head, count;
} queue = {.lock = PTHREAD_MUTEX_INITIALIZER};

static bool queue_push(struct item it)
{
    bool ok = false;
    pthread_mutex_lock(&queue.lock);
    if (queue.count < QCAP) {
        queue.q[(queue.head + queue.count++) % QCAP] = it;
        ok = true;
    }
    pthread_mutex_unlock(&queue.lock);
    return ok;
}

static bool queue_pop(struct item *it)
{
    bool ok = false;
    pthread_mutex_lock(&queue.lock);
    if (queue.count) {
        *it = queue.q[queue.head];
        queue.head = (queue.head + 1) % QCAP;
        queue.count--;
        ok = true;
    }
    pthread_mutex_unlock(&queue.lock);
    return ok;
}

struct worker {
    struct fa_lab *lab;
    unsigned index, ops;
    uint64_t allocs, frees;
};

static void verify_and_free(struct worker *w, struct item *it, fa_rng *rng)
{
    CHECK_PATTERN(it->p, it->n, it->id);
    if (fa_rng_below(rng, 4) == 0) {
        size_t n = 1 + fa_rng_below(rng, 3000);
        unsigned char *q = _fa_lab_instance_realloc(w->lab, it->p, n);
        CHECK(q != NULL);
        CHECK_PATTERN(q, it->n < n ? it->n : n, it->id);
        it->p = q;
    }
    _fa_lab_instance_free(w->lab, it->p, "free");
    w->frees++;
}

static void *churn(void *arg)
{
    struct worker *w = arg;
    fa_rng rng;
    fa_rng_seed(&rng, 77 + w->index);
    struct item mine[64] = {{0}};
    for (unsigned op = 0; op < w->ops; op++) {
        struct item *slot = &mine[fa_rng_below(&rng, 64)];
        if (slot->p) {
            if (fa_rng_below(&rng, 3) != 0 || !queue_push(*slot))
                verify_and_free(w, slot, &rng);
            slot->p = NULL;
        } else {
            size_t n =
                fa_rng_below(&rng, 8) ? 1 + fa_rng_below(&rng, 512) : 1 + fa_rng_below(&rng, 20000);
            size_t align = fa_rng_below(&rng, 16) == 0 ? 64 : 0;
            slot->p = _fa_lab_instance_alloc(w->lab, align, n);
            CHECK(slot->p != NULL);
            slot->n = n;
            slot->id = ((uint64_t)w->index << 40) | op;
            fa_pattern_fill(slot->p, n, slot->id);
            w->allocs++;
        }
        struct item it;
        if (op % 3 == 0 && queue_pop(&it))
            verify_and_free(w, &it, &rng);
    }
    for (int i = 0; i < 64; i++)
        if (mine[i].p)
            verify_and_free(w, &mine[i], &rng);
    _fa_lab_instance_thread_exit(w->lab);
    return NULL;
}

static void test_churn(enum fa_lock_mode lock, enum fa_policy policy)
{
    struct fa_lab_config cfg = {
        .heap = {.policy = policy, .index = FA_LAB_INDEX_TREE, .coalesce = true, .exact_max = 128},
        .lock = lock,
        .arenas = 3,
        .direct = 16384,
        .slot_size = (size_t)128 << 20,
        .max_heaps = 8,
    };
    struct fa_lab *lab = _fa_lab_instance_create(&cfg);
    CHECK(lab != NULL);
    unsigned ops = (FA_TEST_TSAN ? 2000 : 20000) * fa_test_scale();
    struct worker w[THREADS];
    pthread_t t[THREADS];
    for (unsigned i = 0; i < THREADS; i++) {
        w[i] = (struct worker){.lab = lab, .index = i, .ops = ops};
        CHECK_EQ(pthread_create(&t[i], NULL, churn, &w[i]), 0);
    }
    /* Statistics and checks while the workers run: they must see consistent heaps (the
     * heaps they may walk are locked or unowned) and race with nothing. */
    for (int round = 0; round < 20; round++) {
        struct fa_lab_stats s;
        _fa_lab_instance_stats(lab, &s);
        CHECK_GE(s.free_space_with_headers, s.free_bytes);
        _fa_lab_instance_check(lab);
        sched_yield();
    }
    uint64_t allocs = 0, frees = 0;
    for (unsigned i = 0; i < THREADS; i++) {
        CHECK_EQ(pthread_join(t[i], NULL), 0);
        allocs += w[i].allocs;
        frees += w[i].frees;
    }
    struct worker drain = {.lab = lab};
    fa_rng rng;
    fa_rng_seed(&rng, 1);
    struct item it;
    while (queue_pop(&it))
        verify_and_free(&drain, &it, &rng);
    CHECK_EQ(allocs, frees + drain.frees);

    /* Every worker exited: all heaps can be checked and every block is free again. */
    unsigned heaps = _fa_lab_instance_check(lab);
    struct fa_lab_stats s;
    _fa_lab_instance_stats(lab, &s);
    CHECK_EQ(heaps, s.heaps);
    CHECK_EQ(s.mallocs + s.direct_allocs, s.frees + s.direct_frees);
    CHECK_GE(s.mallocs + s.direct_allocs, allocs);
    CHECK_GT(s.direct_allocs, 0);
    CHECK_EQ(s.direct_bytes, 0);
    if (lock == FA_LOCK_THREAD) {
        CHECK_EQ(s.lock_acquisitions, 0);
        CHECK_GE(s.heaps, 1);
    } else {
        /* One acquisition per heap operation at least (realloc may take two). */
        CHECK_GE(s.lock_acquisitions, s.mallocs + s.frees);
        CHECK_EQ(s.heaps, lock == FA_LOCK_GLOBAL ? 1 : 3);
    }
    _fa_lab_instance_destroy(lab);
}

/* ---- ECE650 thread_test: concurrent mallocs, no overlap ---- */

#define ITEMS 2000

struct region {
    uintptr_t start;
    size_t bytes;
};

static struct region regions[THREADS * ITEMS];
static pthread_barrier_t barrier;

struct filler {
    struct fa_lab *lab;
    unsigned index;
};

static void *fill(void *arg)
{
    struct filler *f = arg;
    pthread_barrier_wait(&barrier);
    for (unsigned i = 0; i < ITEMS; i++) {
        struct region *r = &regions[f->index * ITEMS + i];
        r->bytes = 32 * (4 + (f->index * 7919 + i * 31) % 13); /* 128..512, like the study */
        void *p = _fa_lab_instance_alloc(f->lab, 0, r->bytes);
        CHECK(p != NULL);
        memset(p, (int)f->index, r->bytes);
        r->start = (uintptr_t)p;
    }
    pthread_barrier_wait(&barrier);
    _fa_lab_instance_thread_exit(f->lab);
    return NULL;
}

static int by_start(const void *a, const void *b)
{
    uintptr_t x = ((const struct region *)a)->start, y = ((const struct region *)b)->start;
    return x < y ? -1 : x > y;
}

static void test_no_overlap(enum fa_lock_mode lock)
{
    struct fa_lab_config cfg = {
        .heap = {.policy = FA_POLICY_BEST, .index = FA_LAB_INDEX_TREE, .coalesce = true},
        .lock = lock,
        .arenas = 2,
        .slot_size = (size_t)64 << 20,
        .max_heaps = 8,
    };
    struct fa_lab *lab = _fa_lab_instance_create(&cfg);
    CHECK(lab != NULL);
    CHECK_EQ(pthread_barrier_init(&barrier, NULL, THREADS), 0);
    pthread_t t[THREADS];
    struct filler f[THREADS];
    for (unsigned i = 0; i < THREADS; i++) {
        f[i] = (struct filler){lab, i};
        CHECK_EQ(pthread_create(&t[i], NULL, fill, &f[i]), 0);
    }
    for (unsigned i = 0; i < THREADS; i++)
        CHECK_EQ(pthread_join(t[i], NULL), 0);
    pthread_barrier_destroy(&barrier);
    qsort(regions, THREADS * ITEMS, sizeof regions[0], by_start);
    for (unsigned i = 1; i < THREADS * ITEMS; i++)
        CHECK_MSG(regions[i - 1].start + regions[i - 1].bytes <= regions[i].start,
                  "blocks %#lx (%zu bytes) and %#lx overlap", (unsigned long)regions[i - 1].start,
                  regions[i - 1].bytes, (unsigned long)regions[i].start);
    /* Frees from this thread: remote in thread mode, into each block's own arena otherwise. */
    for (unsigned i = 0; i < THREADS * ITEMS; i++)
        _fa_lab_instance_free(lab, (void *)regions[i].start, "free");
    struct fa_lab_stats s;
    _fa_lab_instance_stats(lab, &s);
    CHECK_EQ(s.mallocs, THREADS * ITEMS);
    CHECK_EQ(s.frees, THREADS * ITEMS);
    _fa_lab_instance_check(lab);
    _fa_lab_instance_destroy(lab);
}

int main(void)
{
    for (int lock = 0; lock <= FA_LOCK_ARENAS; lock++) {
        test_churn(lock, FA_POLICY_BEST);
        test_churn(lock, FA_POLICY_NEXT);
        test_churn(lock, FA_POLICY_SEGREGATED);
        test_churn(lock, FA_POLICY_TLSF);
        test_churn(lock, FA_POLICY_BUDDY);
        test_churn(lock, FA_POLICY_SLAB);
        test_no_overlap(lock);
    }
    printf("lab/threads: ok\n");
    return 0;
}

/* ctest labels: threads */
/* Whole pages change their owner thread (page_pool.c): a page that fills up after other
 * threads have freed into it goes to the page pool, and whichever thread next needs a page of
 * its class takes it, while other threads keep freeing its blocks remotely. Four threads each
 * allocate batches of one class, pass them on through a shared ring and free the batches the
 * others passed, so that every page gets remote frees before, while and after it changes hands.
 * Block by block: no block is handed out twice while live (a table of live addresses), every
 * block keeps its bytes until it is freed (a pattern), and once all are freed and the ended
 * threads' heaps are collected no page holds a block of the class (none lost on a remote list
 * nobody collects), and the heap checker passes on every thread as pages come and go. Run
 * with the pool off (FITALLOC_PAGE_POOL, the default: no page changes hands), then again with
 * it on (pages must have changed hands), and on with meshing. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "blk.h"
#include "check.h"
#include "rerun.h"
#include "fitalloc-stats.h"
#include "fitalloc.h"

extern uint64_t _fa_page_pool_takes;
typedef struct fa_heap_s fa_heap_t;
void _fa_heap_check(const fa_heap_t *heap);
extern __thread fa_heap_t *_fa_heap_tls;

/* A class of its own (65-80 bytes), which nothing else in the test allocates. */
#define SIZE 80
#define THREADS 4
#define BATCH 600 /* most of a 64 KiB page of 80-byte blocks (819) */
#define RING 6

/* Live block addresses: open addressing, guarded by table_lock. */
#define TABLE_SLOTS (1u << 16)
static uintptr_t table[TABLE_SLOTS];
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t slot_of(uintptr_t a)
{
    return (size_t)(fa_mix64(a) & (TABLE_SLOTS - 1));
}

static void table_add(uintptr_t a)
{
    pthread_mutex_lock(&table_lock);
    size_t i = slot_of(a);
    for (; table[i] != 0; i = (i + 1) & (TABLE_SLOTS - 1))
        CHECK_MSG(table[i] != a, "block %#lx handed out twice", (unsigned long)a);
    table[i] = a;
    pthread_mutex_unlock(&table_lock);
}

/* Deletion by backward shift keeps every probe chain unbroken. */
static void table_remove(uintptr_t a)
{
    pthread_mutex_lock(&table_lock);
    size_t i = slot_of(a);
    while (table[i] != a) {
        CHECK_MSG(table[i] != 0, "block %#lx freed but not live", (unsigned long)a);
        i = (i + 1) & (TABLE_SLOTS - 1);
    }
    for (size_t j = (i + 1) & (TABLE_SLOTS - 1); table[j] != 0; j = (j + 1) & (TABLE_SLOTS - 1)) {
        size_t home = slot_of(table[j]);
        /* table[j] may move to the hole at i if its home is not in (i, j]. */
        if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
            table[i] = table[j];
            i = j;
        }
    }
    table[i] = 0;
    pthread_mutex_unlock(&table_lock);
}

struct batch {
    blk b[BATCH];
    int from;
};

static struct batch *ring[RING];
static int ring_head, ring_count;
static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned rounds;

/* Queue bt; when the ring is full, its oldest batch comes out for the caller to free instead
 * (so that no thread ever waits for another). */
static struct batch *put(struct batch *bt)
{
    struct batch *out = NULL;
    pthread_mutex_lock(&ring_lock);
    if (ring_count == RING) {
        out = ring[ring_head];
        ring_head = (ring_head + 1) % RING;
        ring_count--;
    }
    ring[(ring_head + ring_count++) % RING] = bt;
    pthread_mutex_unlock(&ring_lock);
    return out;
}

/* Another thread's batch if one waits, else NULL (the caller allocates on). */
static struct batch *take_other(int self)
{
    struct batch *bt = NULL;
    pthread_mutex_lock(&ring_lock);
    if (ring_count > 0 && ring[ring_head]->from != self) {
        bt = ring[ring_head];
        ring_head = (ring_head + 1) % RING;
        ring_count--;
    }
    pthread_mutex_unlock(&ring_lock);
    return bt;
}

static void free_batch(struct batch *bt)
{
    for (int i = 0; i < BATCH; i++) {
        table_remove((uintptr_t)bt->b[i].p);
        blk_del(&bt->b[i]);
    }
    fa_free(bt);
}

static void *worker(void *arg)
{
    int self = (int)(intptr_t)arg;
    for (unsigned round = 0; round < rounds; round++) {
        struct batch *bt = fa_malloc(sizeof *bt);
        CHECK(bt != NULL);
        bt->from = self;
        for (int i = 0; i < BATCH; i++) {
            bt->b[i].p = fa_malloc(SIZE);
            blk_fill(&bt->b[i], SIZE);
            table_add((uintptr_t)bt->b[i].p);
        }
        struct batch *out = put(bt);
        if (out)
            free_batch(out);
        struct batch *other = take_other(self);
        if (other)
            free_batch(other);
        /* Queues, counts and segment lists, with pages coming and going. */
        if (round % 8 == 0)
            _fa_heap_check(_fa_heap_tls);
    }
    return NULL;
}

static void count_class(const struct fa_heap_area *area, void *arg)
{
    if (area->kind == FA_AREA_PAGE && area->block_size == SIZE)
        *(size_t *)arg += area->used;
}

static void run(const char *how)
{
    bool pool = fa_option_get("page_pool") == 1;
    rounds = (unsigned)fa_test_ops(FA_TEST_SANITIZED ? 400 : 600);
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        CHECK_EQ(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t), 0);
    for (int t = 0; t < THREADS; t++)
        CHECK_EQ(pthread_join(th[t], NULL), 0);
    /* The batches left: freed here, remotely for every page. */
    while (ring_count > 0) {
        struct batch *bt = ring[ring_head];
        ring_head = (ring_head + 1) % RING;
        ring_count--;
        free_batch(bt);
    }
    for (size_t i = 0; i < TABLE_SLOTS; i++)
        CHECK_MSG(table[i] == 0, "block %#lx never freed", (unsigned long)table[i]);
    /* Pages changed hands with the pool on, and only then. */
    uint64_t takes = __atomic_load_n(&_fa_page_pool_takes, __ATOMIC_RELAXED);
    if (pool)
        CHECK_GT(takes, 0);
    else
        CHECK_EQ(takes, 0);
    /* The ended threads' heaps are given up, pooled pages swept: every page's blocks are
     * back on it. */
    fa_collect();
    size_t live = 0;
    CHECK_GE(fa_heap_visit(count_class, &live), 0);
    CHECK_EQ(live, 0);
    printf("page_pool %s: ok, %u rounds of %d threads, %llu pages taken from the pool\n", how,
           rounds, THREADS, (unsigned long long)takes);
}

int main(int argc, char **argv)
{
    run(argc > 1 ? argv[1] : "(pool off)");
    if (argc == 1) {
        const char *env[] = {"FITALLOC_PAGE_POOL=1", NULL};
        char *args[] = {argv[0], (char *)"--pool", NULL};
        fa_test_rerun("FITALLOC_PAGE_POOL=1", env, args);
        /* Meshing never takes a page that went through the pool: both on at once. */
        const char *mesh_env[] = {"FITALLOC_PAGE_POOL=1", "FITALLOC_MESH=1", NULL};
        char *mesh_args[] = {argv[0], (char *)"--pool-mesh", NULL};
        fa_test_rerun("FITALLOC_PAGE_POOL=1 FITALLOC_MESH=1", mesh_env, mesh_args);
    }
    return 0;
}

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
 * with the default FITALLOC_PAGE_POOL, then with the other setting (off: no page changes hands;
 * on: pages must have changed hands), on with meshing, on for an idle owner and on for a
 * producer whose pages stay with it (below). */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "blk.h"
#include "check.h"
#include "rerun.h"
#include "fitalloc-stats.h"
#include "fitalloc.h"

extern uint64_t _fa_page_pool_takes, _fa_page_pool_puts;
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
/* The workers keep step every LOCKSTEP rounds: on a loaded machine one could otherwise run all
 * its rounds alone, freeing only its own batches, and no page would get the frees of both its
 * owner and the others that send it to the pool. */
#define LOCKSTEP 16
static pthread_barrier_t lockstep;
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
        if (round % LOCKSTEP == LOCKSTEP - 1)
            pthread_barrier_wait(&lockstep);
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
    /* A heap of its own first: a thread whose first call frees a parked heap's block takes
     * that heap, and remote frees into its pages would then wait for a slow path of ours. */
    fa_free(fa_malloc(1));
    bool pool = fa_option_get("page_pool") == 1;
    rounds = (unsigned)fa_test_ops(FA_TEST_SANITIZED ? 400 : 600);
    pthread_t th[THREADS];
    CHECK_EQ(pthread_barrier_init(&lockstep, NULL, THREADS), 0);
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

/* The idle owner's half: a thread that stops allocating in a class hands that class's pages,
 * live blocks in them, to the pool, while it keeps allocating in another class (so its slow
 * path runs), and a thread that allocates in the class takes them. Meanwhile a third thread
 * keeps freeing the idle owner's blocks remotely, into pages that change owner under it. */
#define IDLE_SIZE 208  /* a class of its own (193-208 bytes) */
#define IDLE_HELD 1600 /* five 64 KiB pages of 208-byte blocks (315 each) */
#define IDLE_PAGES 16
static blk held[IDLE_HELD];
static uintptr_t owner_pages[IDLE_PAGES]; /* the idle owner's pages (64 KiB-aligned) */
static int owner_page_count;
static atomic_int phase;         /* 1: owner idle in the class; 2: taker allocating; 3: all done */
static atomic_uint owner_rounds; /* the idle owner's rounds in another class */

static bool in_owner_page(uintptr_t p)
{
    for (int i = 0; i < owner_page_count; i++)
        if (owner_pages[i] == (p & ~(uintptr_t)0xffff))
            return true;
    return false;
}

static void *idle_owner(void *arg)
{
    (void)arg;
    for (int i = 0; i < IDLE_HELD; i++) {
        held[i].p = fa_malloc(IDLE_SIZE);
        blk_fill(&held[i], IDLE_SIZE);
        table_add((uintptr_t)held[i].p);
        if (!in_owner_page((uintptr_t)held[i].p)) {
            CHECK_LT(owner_page_count, IDLE_PAGES);
            owner_pages[owner_page_count++] = (uintptr_t)held[i].p & ~(uintptr_t)0xffff;
        }
    }
    /* A quarter freed here: the pages go with free blocks on their local lists. */
    for (int i = 0; i < IDLE_HELD; i += 4) {
        table_remove((uintptr_t)held[i].p);
        blk_del(&held[i]);
    }
    atomic_store(&phase, 1);
    /* Busy in another class only: batches of 1000-byte blocks reach the slow path often. */
    static __thread void *churn[256];
    for (unsigned round = 0; atomic_load(&phase) < 3; round = atomic_fetch_add(&owner_rounds, 1)) {
        for (int i = 0; i < 256; i++)
            CHECK((churn[i] = fa_malloc(1000)) != NULL);
        for (int i = 0; i < 256; i++)
            fa_free(churn[i]);
        if (round % 64 == 0)
            _fa_heap_check(_fa_heap_tls);
    }
    return NULL;
}

/* Frees the idle owner's blocks: half while their pages are still its own, the rest while
 * the taker takes them over. */
static void *remote_freer(void *arg)
{
    (void)arg;
    while (atomic_load(&phase) < 1)
        sched_yield();
    for (int i = 1; i < IDLE_HELD; i++) {
        if (i == IDLE_HELD / 2)
            while (atomic_load(&phase) < 2)
                sched_yield();
        if (!held[i].p)
            continue;
        table_remove((uintptr_t)held[i].p);
        blk_del(&held[i]);
        if (i % 16 == 0)
            sched_yield();
    }
    return NULL;
}

static void count_class_live(const struct fa_heap_area *area, void *arg)
{
    if (area->kind == FA_AREA_PAGE && area->block_size == IDLE_SIZE)
        *(size_t *)arg += area->used;
}

static int in_theirs; /* the taker's blocks that lay in the idle owner's pages */

/* Takes the idle owner's pages, block by block beside the remote frees. */
static void *taker(void *arg)
{
    (void)arg;
    while (atomic_load(&phase) < 1)
        sched_yield();
    /* The owner's pages of the class reach the pool once it has not allocated there between
     * two looks for idle heads (this run's purge delay is 5 ms apart), at the first of its
     * slow paths after that. How many of its rounds that takes depends on how its slow paths
     * fall against the delays, so the wait is bounded by time instead: 30 s is thousands of
     * delays, a bound against a hang, not a measurement. */
    for (int waited_ms = 0;; waited_ms++) {
        if (__atomic_load_n(&_fa_page_pool_puts, __ATOMIC_RELAXED) > 0)
            break;
        CHECK_MSG(waited_ms < 30000, "the idle owner kept its pages (%u rounds)",
                  atomic_load(&owner_rounds));
        usleep(1000);
    }
    atomic_store(&phase, 2);
    static blk mine[IDLE_HELD];
    for (int i = 0; i < IDLE_HELD; i++) {
        mine[i].p = fa_malloc(IDLE_SIZE);
        blk_fill(&mine[i], IDLE_SIZE);
        table_add((uintptr_t)mine[i].p);
        in_theirs += in_owner_page((uintptr_t)mine[i].p);
    }
    _fa_heap_check(_fa_heap_tls);
    for (int i = 0; i < IDLE_HELD; i++) {
        table_remove((uintptr_t)mine[i].p);
        blk_del(&mine[i]);
    }
    atomic_store(&phase, 3);
    return NULL;
}

/* Every thread ends (its heap parked, given up at fa_collect), so that the last remote frees
 * are collected and a page still holding a block means one was lost. */
static void run_idle_owner(void)
{
    pthread_t th[3];
    void *(*fn[3])(void *) = {idle_owner, remote_freer, taker};
    for (int t = 0; t < 3; t++)
        CHECK_EQ(pthread_create(&th[t], NULL, fn[t], NULL), 0);
    for (int t = 0; t < 3; t++)
        CHECK_EQ(pthread_join(th[t], NULL), 0);
    CHECK_MSG(in_theirs > 0, "no block came from the idle owner's pages");
    for (size_t i = 0; i < TABLE_SLOTS; i++)
        CHECK_MSG(table[i] == 0, "block %#lx never freed", (unsigned long)table[i]);
    fa_collect();
    size_t live = 0;
    CHECK_GE(fa_heap_visit(count_class_live, &live), 0);
    CHECK_EQ(live, 0);
    printf("page_pool idle owner: ok, %d of %d blocks taken in the idle owner's pages\n", in_theirs,
           IDLE_HELD);
}

/* A producer's pages stay with it: one thread allocates batches in a class of its own and
 * another frees every block of them, so that the producer's pages fill up having collected
 * remote frees but none of its own. They go to its full list, not to the pool, and come back
 * to it at the consumer's frees: no page is given to the pool. */
#define PRODUCER_SIZE 336 /* a class of its own (321-336 bytes) */
#define PRODUCER_BATCH 256
#define PRODUCER_ROUNDS 200
static void *batches[2][PRODUCER_BATCH];
static atomic_int produced, consumed; /* batches */

static void *producer(void *arg)
{
    (void)arg;
    for (int round = 0; round < PRODUCER_ROUNDS; round++) {
        while (round - atomic_load(&consumed) == 2)
            sched_yield();
        for (int i = 0; i < PRODUCER_BATCH; i++) {
            batches[round % 2][i] = fa_malloc(PRODUCER_SIZE);
            CHECK(batches[round % 2][i] != NULL);
        }
        atomic_store(&produced, round + 1);
    }
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    for (int round = 0; round < PRODUCER_ROUNDS; round++) {
        while (atomic_load(&produced) == round)
            sched_yield();
        for (int i = 0; i < PRODUCER_BATCH; i++)
            fa_free(batches[round % 2][i]);
        atomic_store(&consumed, round + 1);
    }
    return NULL;
}

static void run_producer(void)
{
    pthread_t th[2];
    CHECK_EQ(pthread_create(&th[0], NULL, producer, NULL), 0);
    CHECK_EQ(pthread_create(&th[1], NULL, consumer, NULL), 0);
    for (int t = 0; t < 2; t++)
        CHECK_EQ(pthread_join(th[t], NULL), 0);
    uint64_t puts = __atomic_load_n(&_fa_page_pool_puts, __ATOMIC_RELAXED);
    /* None as a rule (the rule before record 080's sent 99 here); one in a few runs pinned to one
     * core (a cause not found yet: issue 36's note), hence a bound rather than zero. */
    CHECK_MSG(puts <= 4, "%llu of the producer's pages went to the pool", (unsigned long long)puts);
    printf("page_pool producer: ok, %d batches of %d blocks, %llu pages pooled\n", PRODUCER_ROUNDS,
           PRODUCER_BATCH, (unsigned long long)puts);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--idle") == 0) {
        run_idle_owner();
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "--producer") == 0) {
        run_producer();
        return 0;
    }
    bool on = fa_option_get("page_pool") == 1;
    run(argc > 1 ? argv[1] : on ? "(the default: pool on)" : "(the default: pool off)");
    if (argc == 1) {
        /* The other setting than the default's. */
        const char *env[] = {on ? "FITALLOC_PAGE_POOL=0" : "FITALLOC_PAGE_POOL=1", NULL};
        char *args[] = {argv[0], (char *)(on ? "--pool-off" : "--pool"), NULL};
        fa_test_rerun(env[0], env, args);
        /* Both on at once: pages that went through the pool are meshed too. Under
         * ThreadSanitizer, which takes the mesher's remapping of a frame for a write racing
         * with the program's reads, without the purge thread (passes at fa_collect only). */
        const char *mesh_env[] = {"FITALLOC_PAGE_POOL=1", "FITALLOC_MESH=1",
                                  FA_TEST_TSAN ? "FITALLOC_PURGE_THREAD=0" : NULL, NULL};
        char *mesh_args[] = {argv[0], (char *)"--pool-mesh", NULL};
        fa_test_rerun("FITALLOC_PAGE_POOL=1 FITALLOC_MESH=1", mesh_env, mesh_args);
        const char *idle_env[] = {"FITALLOC_PAGE_POOL=1", "FITALLOC_PURGE_DELAY=5", NULL};
        char *idle_args[] = {argv[0], (char *)"--idle", NULL};
        fa_test_rerun("FITALLOC_PAGE_POOL=1, an idle owner", idle_env, idle_args);
        const char *producer_env[] = {"FITALLOC_PAGE_POOL=1", NULL};
        char *producer_args[] = {argv[0], (char *)"--producer", NULL};
        fa_test_rerun("FITALLOC_PAGE_POOL=1, a producer", producer_env, producer_args);
    }
    return 0;
}

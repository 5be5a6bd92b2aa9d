/* ctest labels: threads */
/* Meshing takes pages that changed owner (FITALLOC_MESH=1 with FITALLOC_PAGE_POOL=1). Two
 * threads allocate 64-byte blocks in rounds and each frees half of the other's every round and
 * one of its own, so that their pages collect remote and local frees, fill up, go to the page
 * pool and are taken from it: pages change owner. Then each frees a random 90 % of the blocks it still has, in pages it
 * holds, the other holds or the pool holds, and the mesher must merge frames of pages that
 * changed owner (it took none before: record 051). Every block keeps its pattern through it all,
 * and once all are freed no page holds a block of the class and nothing stays detached or
 * meshed. The phases take turns at barriers, so the run is the same every time; under
 * ThreadSanitizer the passes run only in fa_collect(), as in the other meshing tests. */
#include <pthread.h>

#include "engine/mesh.h"
#include "mesh_test.h"

#define ROUNDS 64
#define PER_ROUND 512 /* blocks a thread allocates a round: half a page of 64-byte blocks */
#define PER_THREAD (ROUNDS * PER_ROUND)

static void *mine[2][PER_THREAD]; /* NULL where freed */
static pthread_barrier_t pair;    /* the two workers, between rounds */
static pthread_barrier_t all;     /* the workers and the main thread, between phases */

static uint64_t tag_of(size_t t, size_t i)
{
    return (uint64_t)t << 32 | i;
}

static void check_and_free(size_t t, size_t i)
{
    CHECK_MSG(fa_pattern_find_bad(mine[t][i], BLOCK, tag_of(t, i)) == (size_t)-1,
              "block %zu of thread %zu (%p) lost its data", i, t, mine[t][i]);
    fa_free(mine[t][i]);
    mine[t][i] = NULL;
}

static void *worker(void *arg)
{
    size_t t = (size_t)(uintptr_t)arg;
    /* Rounds: the other thread frees the odd blocks of each of ours, remotely, and we free the
     * first (a page only other threads free is a producer's, which stays with it: heap.c). */
    for (size_t r = 0; r < ROUNDS; r++) {
        for (size_t i = r * PER_ROUND; i < (r + 1) * PER_ROUND; i++) {
            mine[t][i] = fa_malloc(BLOCK);
            CHECK(mine[t][i]);
            fa_pattern_fill(mine[t][i], BLOCK, tag_of(t, i));
        }
        pthread_barrier_wait(&pair);
        for (size_t i = r * PER_ROUND + 1; i < (r + 1) * PER_ROUND; i += 2)
            check_and_free(1 - t, i);
        check_and_free(t, r * PER_ROUND);
        pthread_barrier_wait(&pair);
    }
    pthread_barrier_wait(&all);
    /* In turn, a random 90 % of our blocks freed, and our sparse pages handed over. */
    for (size_t turn = 0; turn < 2; turn++) {
        if (turn == t) {
            fa_rng rng;
            fa_rng_seed(&rng, 7 + t);
            for (size_t i = 0; i < PER_THREAD; i++)
                if (mine[t][i] && fa_rng_below(&rng, 10))
                    check_and_free(t, i);
            fa_collect();
        }
        pthread_barrier_wait(&all);
    }
    pthread_barrier_wait(&all); /* the main thread meshes and counts */
    for (size_t i = 0; i < PER_THREAD; i++)
        if (mine[t][i])
            check_and_free(t, i);
    return NULL;
}

/* Under the mesher's lock: detached pages of the test's class that changed owner, and those of
 * them meshed. */
static void count_migrants(size_t *detached, size_t *meshed)
{
    *detached = *meshed = 0;
    fa_mutex_lock(&_fa_mesh_lock);
    for (size_t bin = 0; bin < FA_SMALL_BINS; bin++)
        for (fa_mesh_page_t *rec = _fa_mesh_pages[bin]; rec; rec = rec->next)
            if (rec->page->migrant && rec->page->block_size == BLOCK) {
                (*detached)++;
                *meshed += rec->shared != 0;
            }
    fa_mutex_unlock(&_fa_mesh_lock);
}

static void case_pool(void)
{
    CHECK_EQ(fa_option_get("PAGE_POOL"), 1);
    CHECK_EQ(pthread_barrier_init(&pair, NULL, 2), 0);
    CHECK_EQ(pthread_barrier_init(&all, NULL, 3), 0);
    pthread_t th[2];
    for (size_t t = 0; t < 2; t++)
        CHECK_EQ(pthread_create(&th[t], NULL, worker, (void *)(uintptr_t)t), 0);
    pthread_barrier_wait(&all);
    uint64_t takes = __atomic_load_n(&_fa_page_pool_takes, __ATOMIC_RELAXED);
    CHECK_MSG(takes > 0, "no page changed owner");
    for (size_t turn = 0; turn < 2; turn++)
        pthread_barrier_wait(&all);
    for (uint64_t merges = 1; merges;) {
        uint64_t before = fa_test_stats().mesh_merges;
        fa_collect();
        merges = fa_test_stats().mesh_merges - before;
    }
    size_t detached, meshed;
    count_migrants(&detached, &meshed);
    printf("mesh/mesh_pool: %llu pages taken from the pool; %zu of them detached, %zu meshed; "
           "%llu merges in all\n",
           (unsigned long long)takes, detached, meshed,
           (unsigned long long)fa_test_stats().mesh_merges);
    CHECK_MSG(meshed > 0, "no page that changed owner was meshed (%zu detached)", detached);
    for (size_t t = 0; t < 2; t++)
        for (size_t i = 0; i < PER_THREAD; i++)
            if (mine[t][i])
                CHECK_MSG(fa_pattern_find_bad(mine[t][i], BLOCK, tag_of(t, i)) == (size_t)-1,
                          "block %zu of thread %zu lost its data", i, t);
    pthread_barrier_wait(&all);
    for (size_t t = 0; t < 2; t++)
        CHECK_EQ(pthread_join(th[t], NULL), 0);
    /* The ended threads' heaps given up, the pool swept, the detached pages released. */
    fa_collect();
    struct area_sum sum = {0};
    CHECK_GE(fa_heap_visit(sum_pages, &sum), 0);
    CHECK_EQ(sum.used, 0);
    /* (Pages of other classes may stay detached: the C library's blocks of the ended threads.) */
    count_migrants(&detached, &meshed);
    CHECK_EQ(detached, 0);
}

int main(int argc, char **argv)
{
    static const struct mesh_case cases[] = {{"pool", case_pool}};
    if (argc < 2) {
        const char *env[] = {"FITALLOC_MESH=1", "FITALLOC_PAGE_POOL=1",
                             FA_TEST_TSAN ? "FITALLOC_PURGE_THREAD=0" : "FITALLOC_VERBOSE=0",
                             FA_TEST_TSAN ? "FITALLOC_MESH_PERIOD=1000s" : "FITALLOC_VERBOSE=0",
                             NULL};
        char *args[] = {argv[0], (char *)"pool", NULL};
        fa_test_rerun("pool", env, args);
        return 0;
    }
    return mesh_run_case(argv[1], cases, 1);
}

/* ctest labels: integrity threads */
/* calloc leaves alone the blocks it knows to be zero (carved from a page's never used, clean
 * memory: types.h, free_zero) and clears every other one. Each case writes its blocks, frees
 * them and callocs again, then checks every byte:
 *   reuse     blocks of small, medium and big classes, written and freed, calloc'd again
 *             (among them a class's first block, which malloc took from fresh memory);
 *   purged    the same after fa_collect() gave the freed pages back to the OS;
 *   threads   blocks freed by another thread, a heap an ended thread left, pages taken
 *             from the page pool, and a random mix of malloc, calloc and free;
 *   fragment  64-byte blocks, 90 % freed, fa_collect() (meshing passes when on), calloc'd again.
 * A fresh big block's calloc leaves its memory untouched (not resident) in the default mode.
 * The test runs itself again with FITALLOC_MESH=1; secure/suite runs it in secure mode. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "fitalloc.h"
#include "rerun.h"
#include "rss.h"

static const size_t k_sizes[] = {16,   24,   48,   100,   512,    1000,   1024,
                                 1500, 4096, 8192, 20000, 131072, 200000, 400000};
#define NSIZES (sizeof k_sizes / sizeof k_sizes[0])
#define PER_SIZE 40

static void *blocks[NSIZES][PER_SIZE];

/* memcmp a chunk at a time, and the bytes one by one only to name the first wrong one: the
 * sanitizers check a memcmp's range at once, and each byte read of a loop apart. */
static void check_zero(const void *p, size_t n, const char *where)
{
    static const unsigned char zeros[4096];
    const unsigned char *b = p;
    for (size_t at = 0; at < n; at += sizeof zeros) {
        size_t len = n - at < sizeof zeros ? n - at : sizeof zeros;
        if (memcmp(b + at, zeros, len) == 0)
            continue;
        for (size_t i = at; i < at + len; i++)
            CHECK_MSG(b[i] == 0, "%s: calloc(1, %zu) = %p: byte %zu is %#x", where, n, p, i, b[i]);
    }
}

static void *zeroed(size_t n, const char *where)
{
    void *p = fa_calloc(1, n);
    CHECK_MSG(p != NULL, "%s: calloc(1, %zu) failed", where, n);
    check_zero(p, n, where);
    return p;
}

/* Blocks of a size in each round: fewer of the big classes, whose page holds 4 to 16. */
static size_t per_size(size_t s)
{
    return k_sizes[s] > 65536 ? 8 : PER_SIZE;
}

/* Every block calloc'd and checked, then written whole. */
static void calloc_all(const char *where)
{
    for (size_t s = 0; s < NSIZES; s++)
        for (size_t i = 0; i < per_size(s); i++) {
            blocks[s][i] = zeroed(k_sizes[s], where);
            memset(blocks[s][i], 0xa5, fa_malloc_usable_size(blocks[s][i]));
        }
}

static void free_all(void)
{
    for (size_t s = 0; s < NSIZES; s++)
        for (size_t i = 0; i < per_size(s); i++)
            fa_free(blocks[s][i]);
}

/* A fresh big page's block is not cleared: its memory is never touched. */
static void case_fresh_untouched(void)
{
    const size_t n = 480 << 10; /* a big class of its own, first used here */
    void *p = fa_calloc(1, n);
    CHECK(p != NULL);
    /* Before the check, whose reads map the pages (the kernel's zero page). */
    if (!fa_option_get("secure"))
        CHECK_LT(fa_test_resident_pages(p, n), n / 4096 / 8);
    check_zero(p, n, "fresh");
    fa_free(p);
}

/* A block a malloc took from a class's first page (fresh memory), written and freed: the
 * calloc that takes it back from the free list clears it. */
static void case_first_block_back(void)
{
    static const size_t sizes[] = {3000, 12000, 300000}; /* classes no other case uses */
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        void *p = fa_malloc(sizes[s]);
        CHECK(p != NULL);
        memset(p, 0xa5, sizes[s]);
        fa_free(p);
        fa_free(zeroed(sizes[s], "first block back"));
    }
}

static void case_reuse(void)
{
    for (int round = 0; round < 3; round++) {
        calloc_all("reuse");
        free_all();
    }
}

static void case_purged(void)
{
    calloc_all("purged, before");
    free_all();
    fa_collect();
    calloc_all("purged");
    free_all();
}

/* Blocks the main thread calloc'd and wrote, freed by a worker (remote frees), calloc'd again
 * by the main thread; then a worker's own blocks, written, half freed, left in its heap. */
static void *free_remote(void *arg)
{
    (void)arg;
    free_all();
    return NULL;
}

static void *leave_heap(void *arg)
{
    (void)arg;
    calloc_all("left heap, before");
    for (size_t s = 0; s < NSIZES; s++)
        for (size_t i = 0; i < per_size(s); i += 2)
            fa_free(blocks[s][i]);
    return NULL;
}

static void *calloc_in_new_thread(void *arg)
{
    (void)arg;
    for (size_t s = 0; s < NSIZES; s++)
        for (size_t i = 0; i < per_size(s); i += 2)
            blocks[s][i] = zeroed(k_sizes[s], "left heap");
    return NULL;
}

static void run_thread(void *(*fn)(void *), void *arg)
{
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, fn, arg), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
}

/* Two threads take turns at random mallocs (written), callocs (checked) and frees of each
 * other's blocks and their own: pages collect remote frees, fill, go to the page pool and
 * change hands. */
#define MIX_SLOTS 512
static void *mix[MIX_SLOTS];
static pthread_barrier_t turn;

static void *mixer(void *arg)
{
    fa_rng rng;
    fa_rng_seed(&rng, (uint64_t)(uintptr_t)arg);
    size_t rounds = fa_test_ops(40);
    for (size_t r = 0; r < rounds; r++) {
        if ((r & 1) == (uintptr_t)arg)
            for (size_t k = 0; k < 400; k++) {
                size_t i = fa_rng_below(&rng, MIX_SLOTS);
                fa_free(mix[i]);
                mix[i] = NULL;
                size_t n = fa_rng_logsize(&rng, 600 << 10);
                if (fa_rng_below(&rng, 2)) {
                    mix[i] = zeroed(n, "mix");
                } else {
                    mix[i] = fa_malloc(n);
                    CHECK(mix[i] != NULL);
                }
                memset(mix[i], 0x5a, n);
            }
        pthread_barrier_wait(&turn);
    }
    return NULL;
}

static void case_threads(void)
{
    calloc_all("remote, before");
    run_thread(free_remote, NULL);
    calloc_all("remote");
    free_all();

    run_thread(leave_heap, NULL);
    run_thread(calloc_in_new_thread, NULL);
    free_all();

    pthread_t t[2];
    CHECK_EQ(pthread_barrier_init(&turn, NULL, 2), 0);
    for (uintptr_t i = 0; i < 2; i++)
        CHECK_EQ(pthread_create(&t[i], NULL, mixer, (void *)i), 0);
    for (int i = 0; i < 2; i++)
        CHECK_EQ(pthread_join(t[i], NULL), 0);
    pthread_barrier_destroy(&turn);
    for (size_t i = 0; i < MIX_SLOTS; i++)
        fa_free(mix[i]);
}

static void case_fragment(void)
{
    size_t count = fa_test_ops(20000);
    void **many = fa_malloc(count * sizeof *many);
    CHECK(many != NULL);
    for (size_t i = 0; i < count; i++) {
        many[i] = fa_malloc(64);
        CHECK(many[i] != NULL);
        memset(many[i], 0xa5, 64);
    }
    fa_rng rng;
    fa_rng_seed(&rng, 7);
    for (size_t i = 0; i < count; i++)
        if (fa_rng_below(&rng, 10)) {
            fa_free(many[i]);
            many[i] = NULL;
        }
    fa_collect();
    fa_collect();
    for (size_t i = 0; i < count; i++)
        if (!many[i])
            many[i] = zeroed(64, "fragment");
    for (size_t i = 0; i < count; i++)
        fa_free(many[i]);
    fa_free(many);
}

int main(int argc, char **argv)
{
    (void)argc;
    case_fresh_untouched();
    case_first_block_back();
    case_reuse();
    case_purged();
    case_threads();
    case_fragment();
    if (!getenv("FITALLOC_MESH") && !fa_option_get("secure")) {
        const char *env[] = {
            "FITALLOC_MESH=1", FA_TEST_TSAN ? "FITALLOC_PURGE_THREAD=0" : "FITALLOC_VERBOSE=0",
            FA_TEST_TSAN ? "FITALLOC_MESH_PERIOD=1000s" : "FITALLOC_VERBOSE=0", NULL};
        fa_test_rerun("FITALLOC_MESH=1", env, argv);
    }
    printf("calloc_zero_memory: ok\n");
    return 0;
}

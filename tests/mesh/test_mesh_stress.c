/* Meshing under churn: two threads allocate, check, free and hand blocks to each other (frees
 * into the other's pages) at random, with the purge thread meshing every millisecond
 * (FITALLOC_MESH_PERIOD=1) and half the blocks freed in bursts so that pages keep being
 * detached, meshed, given back and released. Every block's pattern is checked before it is
 * freed and at the end: no write is lost and no block is handed out twice (a block handed out
 * twice would carry another's pattern). Under ThreadSanitizer, which cannot see the write
 * barrier, one thread churns and the passes run from fa_collect() on it. */
#include <pthread.h>

#include "mesh_test.h"

#define SLOTS 50000

struct worker {
    void *slot[SLOTS];
    uint64_t tag[SLOTS];
    fa_rng rng;
    size_t id;
};

static struct worker workers[2];
static void *_Atomic handoff[2][64]; /* blocks passed to the other thread, which frees them */

static size_t size_of(uint64_t tag)
{
    return tag % 5 == 0 ? 5400 : tag % 3 == 0 ? 256 : 64;
}

static void churn(struct worker *w, unsigned long ops)
{
    for (unsigned long op = 0; op < ops; op++) {
        size_t i = (size_t)fa_rng_below(&w->rng, SLOTS);
        if (w->slot[i]) {
            CHECK_MSG(fa_pattern_find_bad(w->slot[i], size_of(w->tag[i]), w->tag[i]) == (size_t)-1,
                      "block %p lost its data", w->slot[i]);
            void *p = w->slot[i];
            w->slot[i] = NULL;
            void *expected = NULL;
            /* One in 8 goes to the other thread to free. */
            if (op % 8 == 0 &&
                atomic_compare_exchange_strong(&handoff[w->id][op / 8 % 64], &expected, p))
                continue;
            fa_free(p);
        } else {
            w->tag[i] = (op << 8) | (w->id << 4) | (fa_rng_next(&w->rng) & 15);
            w->slot[i] = fa_malloc(size_of(w->tag[i]));
            CHECK(w->slot[i]);
            fa_pattern_fill(w->slot[i], size_of(w->tag[i]), w->tag[i]);
        }
        if (op % 64 == 0)
            for (size_t k = 0; k < 64; k++) {
                void *p = atomic_exchange(&handoff[1 - w->id][k], NULL);
                fa_free(p);
            }
        /* Bursts: free 90 % of what this thread holds, so that pages go sparse. */
        if (op % (ops / 4 + 1) == ops / 8)
            for (size_t k = 0; k < SLOTS; k++)
                if (w->slot[k] && fa_rng_below(&w->rng, 10)) {
                    CHECK(fa_pattern_find_bad(w->slot[k], size_of(w->tag[k]), w->tag[k]) ==
                          (size_t)-1);
                    fa_free(w->slot[k]);
                    w->slot[k] = NULL;
                }
        if (FA_TEST_TSAN && op % 20000 == 0)
            fa_collect();
    }
}

static void *run(void *arg)
{
    struct worker *w = arg;
    churn(w, fa_test_ops(1500000));
    return NULL;
}

struct class_sum {
    size_t block_size, used;
};

static void sum_class(const struct fa_heap_area *area, void *arg)
{
    struct class_sum *sum = arg;
    if (area->kind == FA_AREA_PAGE && area->block_size == sum->block_size)
        sum->used += area->used;
}

static void case_stress(void)
{
    size_t threads = FA_TEST_TSAN ? 1 : 2;
    pthread_t t[2];
    for (size_t i = 0; i < threads; i++) {
        workers[i].id = i;
        fa_rng_seed(&workers[i].rng, 11 + i);
        CHECK_EQ(pthread_create(&t[i], NULL, run, &workers[i]), 0);
    }
    for (size_t i = 0; i < threads; i++)
        CHECK_EQ(pthread_join(t[i], NULL), 0);
    struct fa_stats s = fa_test_stats();
    CHECK(s.mesh_detached + s.mesh_merges > 0);
    for (size_t i = 0; i < threads; i++)
        for (size_t k = 0; k < SLOTS; k++)
            if (workers[i].slot[k]) {
                CHECK(fa_pattern_find_bad(workers[i].slot[k], size_of(workers[i].tag[k]),
                                          workers[i].tag[k]) == (size_t)-1);
                fa_free(workers[i].slot[k]);
            }
    for (size_t i = 0; i < 2; i++)
        for (size_t k = 0; k < 64; k++)
            fa_free(atomic_exchange(&handoff[i][k], NULL));
    fa_collect();
    /* No page of the test's classes holds a block: none lost, and the mesher let go of theirs.
     * (Pages of other classes may stay detached: the C library's own blocks of the ended
     * threads, in pages the page pool handed to the mesher.) */
    static const size_t sizes[] = {64, 256, 5400}; /* size_of's */
    for (size_t i = 0; i < 3; i++) {
        void *p = fa_malloc(sizes[i]);
        size_t size = fa_malloc_usable_size(p);
        fa_free(p);
        fa_collect();
        struct class_sum sum = {size, 0};
        CHECK_GE(fa_heap_visit(sum_class, &sum), 0);
        CHECK_MSG(sum.used == 0, "%zu blocks of %zu bytes left", sum.used, size);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        const char *env[] = {"FITALLOC_MESH=1", "FITALLOC_MESH_PERIOD=1",
                             FA_TEST_TSAN ? "FITALLOC_PURGE_THREAD=0" : "FITALLOC_VERBOSE=0", NULL};
        char *args[] = {argv[0], (char *)"stress", NULL};
        fa_test_rerun("stress", env, args);
        return 0;
    }
    CHECK_EQ(fa_option_get("MESH"), 1);
    case_stress();
    return 0;
}

/* Shared by the meshing tests: a heap of 64-byte blocks, a random 90 % freed, then meshing
 * passes (fa_collect) until one makes no more merges; each live block holds the pattern of its
 * tag. Header-only, like tests/common. */
#ifndef FITALLOC_TESTS_MESH_H
#define FITALLOC_TESTS_MESH_H

#include <stdatomic.h>
#include <stdbool.h>

#include "check.h"
#include "fitalloc.h"
#include "rerun.h"
#include "stats.h"

#define BLOCK 64

static size_t count;
static void **blocks;  /* NULL where the block was freed */
static uint64_t *tags; /* each live block holds the pattern of its tag */

/* count blocks, each holding the pattern of its index. */
static inline void allocate_blocks(void)
{
    count = fa_test_ops(100000);
    blocks = fa_malloc(count * sizeof *blocks);
    tags = fa_malloc(count * sizeof *tags);
    CHECK(blocks && tags);
    for (size_t i = 0; i < count; i++) {
        blocks[i] = fa_malloc(BLOCK);
        CHECK(blocks[i]);
        tags[i] = i;
        fa_pattern_fill(blocks[i], BLOCK, tags[i]);
    }
}

/* A random 90 % of them freed. */
static inline void free_most(uint64_t seed)
{
    fa_rng rng;
    fa_rng_seed(&rng, seed);
    for (size_t i = 0; i < count; i++)
        if (fa_rng_below(&rng, 10)) {
            fa_free(blocks[i]);
            blocks[i] = NULL;
        }
}

/* Both, then meshing passes until one makes no more merges. */
static inline void fragment(uint64_t seed)
{
    allocate_blocks();
    free_most(seed);
    for (uint64_t merges = 1; merges;) {
        uint64_t before = fa_test_stats().mesh_merges;
        fa_collect();
        merges = fa_test_stats().mesh_merges - before;
    }
}

static inline size_t check_blocks(void)
{
    size_t live = 0;
    for (size_t i = 0; i < count; i++)
        if (blocks[i]) {
            CHECK_MSG(fa_pattern_find_bad(blocks[i], BLOCK, tags[i]) == (size_t)-1,
                      "block %zu (%p) lost its data", i, blocks[i]);
            live++;
        }
    return live;
}

/* Until mesh_test_stop is set, rewrites the even blocks with their own pattern (a thread that
 * writes into meshed pages while another forks). */
static atomic_int mesh_test_stop;

static inline void *rewrite_even_blocks(void *arg)
{
    (void)arg;
    while (!atomic_load(&mesh_test_stop))
        for (size_t i = 0; i < count; i += 2)
            if (blocks[i])
                fa_pattern_fill(blocks[i], BLOCK, tags[i]);
    return NULL;
}

static inline void free_all(void)
{
    for (size_t i = 0; i < count; i++)
        fa_free(blocks[i]);
    fa_free(blocks);
    fa_free(tags);
}

struct area_sum {
    size_t used;
};

static inline void sum_pages(const struct fa_heap_area *area, void *arg)
{
    if (area->kind == FA_AREA_PAGE && area->block_size == BLOCK)
        ((struct area_sum *)arg)->used += area->used;
}

/* A case of a meshing test, run in a process of its own with meshing on. */
struct mesh_case {
    const char *name;
    void (*run)(void);
};

/* Run each of the first n cases of this program again in a fresh process with meshing on. Under
 * ThreadSanitizer the passes run only in fa_collect(), on the test's thread: it cannot see the
 * write barrier that orders them with the other threads' writes. */
static inline void mesh_rerun_cases(char *argv0, const struct mesh_case *cases, size_t n)
{
    const char *env[] = {"FITALLOC_MESH=1",
                         FA_TEST_TSAN ? "FITALLOC_PURGE_THREAD=0" : "FITALLOC_VERBOSE=0",
                         FA_TEST_TSAN ? "FITALLOC_MESH_PERIOD=1000s" : "FITALLOC_VERBOSE=0", NULL};
    for (size_t i = 0; i < n; i++) {
        char *args[] = {argv0, (char *)cases[i].name, NULL};
        fa_test_rerun(cases[i].name, env, args);
    }
}

/* In the process run again: the case named (of n), which must find meshing on. The exit status:
 * 2 for a name that is no case. */
static inline int mesh_run_case(const char *name, const struct mesh_case *cases, size_t n)
{
    CHECK_EQ(fa_option_get("MESH"), 1);
    for (size_t i = 0; i < n; i++)
        if (strcmp(name, cases[i].name) == 0) {
            cases[i].run();
            return 0;
        }
    return 2;
}

#endif

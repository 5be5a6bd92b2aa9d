/* Meshing (FITALLOC_MESH=1): a heap whose blocks died at random gives its memory back, and the
 * blocks that live keep their data through every mesh: written by other threads while their
 * pages are meshed, freed from other threads, across fork, and a second free is still caught.
 * Each case runs in a fresh process with meshing on; fa_collect() runs a mesh pass at once. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/wait.h>

#include "check.h"
#include "child.h"
#include "fitalloc.h"
#include "rerun.h"
#include "stats.h"

#define BLOCK 64

static size_t count;
static void **blocks;  /* NULL where the block was freed */
static uint64_t *tags; /* each live block holds the pattern of its tag */

/* count blocks, a random 90 % freed; meshing passes until one makes no more merges. */
static void fragment(uint64_t seed)
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
    fa_rng rng;
    fa_rng_seed(&rng, seed);
    for (size_t i = 0; i < count; i++)
        if (fa_rng_below(&rng, 10)) {
            fa_free(blocks[i]);
            blocks[i] = NULL;
        }
    for (uint64_t merges = 1; merges;) {
        uint64_t before = fa_test_stats().mesh_merges;
        fa_collect();
        merges = fa_test_stats().mesh_merges - before;
    }
}

static size_t check_blocks(void)
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

static void free_all(void)
{
    for (size_t i = 0; i < count; i++)
        fa_free(blocks[i]);
    fa_free(blocks);
    fa_free(tags);
}

struct area_sum {
    size_t used;
};

static void sum_pages(const struct fa_heap_area *area, void *arg)
{
    if (area->kind == FA_AREA_PAGE && area->block_size == BLOCK)
        ((struct area_sum *)arg)->used += area->used;
}

/* The memory comes back, the data stays, statistics and the heap walk count the live blocks,
 * and everything meshed is given back once freed. */
static void case_fragment(void)
{
    struct fa_stats start = fa_test_stats();
    fragment(1);
    struct fa_stats s = fa_test_stats();
    size_t live = check_blocks();
    CHECK(s.mesh_detached > 0);
    CHECK(s.mesh_merges > 0);
    /* 90 % freed: the 64-byte pages' memory shrinks to well under half (to about a third). */
    uint64_t pages_bytes = (uint64_t)count * BLOCK;
    CHECK_MSG(s.mesh_saved + s.mesh_returned > pages_bytes / 2,
              "saved %llu + returned %llu of %llu bytes", (unsigned long long)s.mesh_saved,
              (unsigned long long)s.mesh_returned, (unsigned long long)pages_bytes);
    CHECK(s.committed + s.mesh_saved + s.mesh_returned >= pages_bytes);
    CHECK_EQ(s.size_class[3].block_size, BLOCK);
    CHECK_EQ(s.size_class[3].live - start.size_class[3].live, live);
    struct area_sum sum = {0};
    fa_heap_visit(sum_pages, &sum);
    CHECK_EQ(sum.used, live);
    /* The blocks are still the program's to write, and new blocks of the class come from the
     * pages given back to the heap (never from meshed ones, whose free memory is another
     * page's): every block keeps its own data. */
    for (size_t i = 0; i < count; i++) {
        if (!blocks[i] && i % 2) {
            blocks[i] = fa_malloc(BLOCK);
            CHECK(blocks[i]);
            live++;
        }
        if (blocks[i]) {
            tags[i] = count + i;
            fa_pattern_fill(blocks[i], BLOCK, tags[i]);
        }
    }
    CHECK_EQ(check_blocks(), live);
    free_all();
    fa_collect();
    s = fa_test_stats();
    CHECK_EQ(s.mesh_detached, 0);
    CHECK_EQ(s.mesh_saved, 0);
    CHECK_EQ(s.mesh_returned, 0);
    CHECK_EQ(s.size_class[3].live, start.size_class[3].live);
}

/* Pages detached but not meshed (no pass runs: no purge thread, a long period) come back to
 * the heap when it needs pages of their class, free lists rebuilt from their bitmaps. */
static void case_reattach(void)
{
    count = fa_test_ops(100000);
    blocks = fa_malloc(count * sizeof *blocks);
    tags = fa_malloc(count * sizeof *tags);
    for (size_t i = 0; i < count; i++) {
        blocks[i] = fa_malloc(BLOCK);
        tags[i] = i;
        fa_pattern_fill(blocks[i], BLOCK, i);
    }
    for (size_t i = 0; i < count; i++)
        if (i % 4) {
            fa_free(blocks[i]);
            blocks[i] = NULL;
        }
    struct fa_stats s = fa_test_stats();
    CHECK(s.mesh_detached > 0);
    CHECK_EQ(s.mesh_merges, 0);
    size_t live = 0;
    for (size_t i = 0; i < count; i++) {
        if (!blocks[i]) {
            blocks[i] = fa_malloc(BLOCK);
            tags[i] = ~(uint64_t)i;
            fa_pattern_fill(blocks[i], BLOCK, tags[i]);
        }
        live++;
    }
    CHECK_EQ(check_blocks(), live);
    s = fa_test_stats();
    CHECK_EQ(s.mesh_detached, 0);
    /* The blocks came from the pages given back: no new page. */
    CHECK(s.committed <
          (uint64_t)count * BLOCK * 5 / 4 + ((uint64_t)count * sizeof(void *) * 2) + (8 << 20));
    free_all();
}

/* Writers: threads rewrite their blocks while the mesher copies them. */
static atomic_int stop;

static void *writer(void *arg)
{
    size_t part = (size_t)(uintptr_t)arg;
    uint64_t round = 0;
    while (!atomic_load(&stop)) {
        round++;
        for (size_t i = part; i < count; i += 2)
            if (blocks[i]) {
                uint64_t tag = (round << 32) | i;
                fa_pattern_fill(blocks[i], BLOCK, tag);
                CHECK_MSG(fa_pattern_find_bad(blocks[i], BLOCK, tag) == (size_t)-1,
                          "block %zu lost a write", i);
            }
    }
    for (size_t i = part; i < count; i += 2)
        if (blocks[i]) {
            tags[i] = (round << 32) | i;
            CHECK(fa_pattern_find_bad(blocks[i], BLOCK, tags[i]) == (size_t)-1);
        }
    return NULL;
}

static void case_writers(void)
{
    /* Freed but not meshed yet: the passes below mesh while the writers write. */
    count = fa_test_ops(100000);
    blocks = fa_malloc(count * sizeof *blocks);
    tags = fa_malloc(count * sizeof *tags);
    for (size_t i = 0; i < count; i++) {
        blocks[i] = fa_malloc(BLOCK);
        tags[i] = i;
        fa_pattern_fill(blocks[i], BLOCK, i);
    }
    fa_rng rng;
    fa_rng_seed(&rng, 2);
    for (size_t i = 0; i < count; i++)
        if (fa_rng_below(&rng, 10)) {
            fa_free(blocks[i]);
            blocks[i] = NULL;
        }
    pthread_t t[2];
    for (size_t i = 0; i < 2; i++)
        CHECK_EQ(pthread_create(&t[i], NULL, writer, (void *)(uintptr_t)i), 0);
    uint64_t before = fa_test_stats().mesh_merges;
    for (int pass = 0; pass < 20; pass++)
        fa_collect();
    atomic_store(&stop, 1);
    for (size_t i = 0; i < 2; i++)
        CHECK_EQ(pthread_join(t[i], NULL), 0);
    CHECK(fa_test_stats().mesh_merges > before);
    check_blocks();
    free_all();
}

/* Frees from another thread into meshed pages. */
static void *free_odd(void *arg)
{
    (void)arg;
    for (size_t i = 1; i < count; i += 2) {
        fa_free(blocks[i]);
        blocks[i] = NULL;
    }
    return NULL;
}

static void case_remote_free(void)
{
    fragment(3);
    CHECK(fa_test_stats().mesh_merges > 0);
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, free_odd, NULL), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
    fa_collect();
    size_t live = check_blocks();
    struct area_sum sum = {0};
    fa_heap_visit(sum_pages, &sum);
    CHECK_EQ(sum.used, live);
    free_all();
}

/* fork after meshing, with a thread writing the even blocks meanwhile: each side sees its own
 * data. */
static void *rewriter(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop))
        for (size_t i = 0; i < count; i += 2)
            if (blocks[i])
                fa_pattern_fill(blocks[i], BLOCK, tags[i]);
    return NULL;
}

static void check_odd(void)
{
    for (size_t i = 1; i < count; i += 2)
        if (blocks[i])
            CHECK(fa_pattern_find_bad(blocks[i], BLOCK, tags[i]) == (size_t)-1);
}

static void case_fork(void)
{
    fragment(4);
    CHECK(fa_test_stats().mesh_saved > 0);
    pthread_t t;
    /* ThreadSanitizer would take the writer and the copies at fork for a race. */
    bool writer = !FA_TEST_TSAN;
    if (writer)
        CHECK_EQ(pthread_create(&t, NULL, rewriter, NULL), 0);
    for (int round = 0; round < 3; round++) {
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
            for (size_t i = 0; i < count; i++)
                if (blocks[i]) {
                    CHECK(fa_pattern_find_bad(blocks[i], BLOCK, tags[i]) == (size_t)-1);
                    fa_pattern_fill(blocks[i], BLOCK, ~tags[i]);
                }
            for (size_t i = 0; i < count; i++)
                if (blocks[i])
                    CHECK(fa_pattern_find_bad(blocks[i], BLOCK, ~tags[i]) == (size_t)-1);
            _exit(0);
        }
        int status;
        CHECK_EQ(waitpid(pid, &status, 0), pid);
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
        check_odd(); /* the child's writes are not ours */
    }
    atomic_store(&stop, 1);
    if (writer)
        CHECK_EQ(pthread_join(t, NULL), 0);
    check_blocks();
    free_all();
}

/* A second free of a block of a detached page, and a free of a block that was already free
 * when its page was detached: both reported. */
static void free_twice(void *arg)
{
    size_t which = (size_t)(uintptr_t)arg;
    fragment(5);
    for (size_t i = 0; i < count; i++)
        if (which == 0 && blocks[i]) {
            fa_free(blocks[i]);
            fa_free(blocks[i]);
        } else if (which == 1 && !blocks[i] && i > 0 && blocks[i - 1]) {
            fa_free((char *)blocks[i - 1] + BLOCK); /* block i's address: freed long ago */
        }
}

static void case_double_free(void)
{
    for (size_t which = 0; which < 2; which++) {
        char out[4096];
        int status = fa_test_run_child(free_twice, (void *)(uintptr_t)which, out, sizeof out);
        CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "status %d: %s", status, out);
        CHECK_MSG(strstr(out, "double free") != NULL, "%s", out);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        /* Under ThreadSanitizer the passes run only in fa_collect(), on the test's thread, as
         * it cannot see the write barrier that orders them with the other threads' writes. */
        const char *env[] = {
            "FITALLOC_MESH=1", FA_TEST_TSAN ? "FITALLOC_PURGE_THREAD=0" : "FITALLOC_VERBOSE=0",
            FA_TEST_TSAN ? "FITALLOC_MESH_PERIOD=1000s" : "FITALLOC_VERBOSE=0", NULL};
        const char *cases[] = {"fragment", "writers", "remote", "fork", "double-free"};
        const char *no_pass_env[] = {"FITALLOC_MESH=1", "FITALLOC_PURGE_THREAD=0",
                                     "FITALLOC_MESH_PERIOD=1000s", NULL};
        char *reattach_args[] = {argv[0], (char *)"reattach", NULL};
        fa_test_rerun("reattach", no_pass_env, reattach_args);
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            /* ThreadSanitizer cannot see the write barrier (a fault, then a retry). */
            if (FA_TEST_TSAN && !strcmp(cases[i], "writers"))
                continue;
            char *args[] = {argv[0], (char *)cases[i], NULL};
            fa_test_rerun(cases[i], env, args);
        }
        return 0;
    }
    CHECK_EQ(fa_option_get("MESH"), 1);
    if (!strcmp(argv[1], "fragment"))
        case_fragment();
    else if (!strcmp(argv[1], "reattach"))
        case_reattach();
    else if (!strcmp(argv[1], "writers"))
        case_writers();
    else if (!strcmp(argv[1], "remote"))
        case_remote_free();
    else if (!strcmp(argv[1], "fork"))
        case_fork();
    else if (!strcmp(argv[1], "double-free"))
        case_double_free();
    else
        return 2;
    return 0;
}

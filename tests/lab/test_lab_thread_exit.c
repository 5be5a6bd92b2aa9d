/* ctest labels: reliability */
/* The lab's heap-per-thread mode (FITALLOC_MODE=lab FITALLOC_LOCK=thread) gives a thread's heap
 * back at thread exit whatever call the thread allocated with, not only malloc: threads that
 * allocate only with aligned_alloc, posix_memalign, memalign, valloc, pvalloc or calloc, or only
 * by moving a block with realloc, exit and their heaps must go back to the pool:
 *   - 1,100 such threads one after the other (never more than one alive) all get memory: the
 *     lab has 1,024 heap slots, so a heap that is not given back runs them out;
 *   - a block such a thread made and left to the main thread, freed by main after the thread
 *     ended, is really freed: fa_lab_check() passes and the statistics then count as many frees
 *     as mallocs, with no used block left (a heap still owned by a dead thread never takes its
 *     remote frees back).
 * The test runs itself again with the lab's options. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "rerun.h"
#include "fitalloc-lab.h"
#include "fitalloc.h"
#include "threads.h"

#define KINDS 7

/* No 1 s sleep at the exit of each of the test's processes (all threads are joined by then). */
FA_TEST_TSAN_OPTIONS("atexit_sleep_ms=0")
static const char *const kind_names[KINDS] = {
    "aligned_alloc", "posix_memalign", "memalign", "valloc", "pvalloc", "calloc", "realloc"};

static void *moved; /* a block made by realloc in the main thread, for the realloc kind */

struct job {
    int kind;
    void *left; /* a block the thread leaves to main */
};

static void *aligned_block(int kind, size_t n)
{
    void *p = NULL;
    switch (kind) {
    case 0: return fa_aligned_alloc(64, n);
    case 1: return fa_posix_memalign(&p, 256, n) == 0 ? p : NULL;
    case 2: return fa_memalign(128, n);
    case 3: return fa_valloc(n);
    case 4: return fa_pvalloc(n);
    case 5: return fa_calloc(4, n / 4);
    default: return NULL;
    }
}

static void *thread_main(void *arg)
{
    struct job *j = arg;
    if (j->kind == 6) {
        /* The only allocation: realloc moves a block main made into this thread's heap. */
        void *q = fa_realloc(moved, 100000);
        CHECK_MSG(q != NULL, "realloc in a new thread failed");
        j->left = q;
        return NULL;
    }
    void *p = aligned_block(j->kind, 1000);
    CHECK_MSG(p != NULL, "%s in a new thread failed", kind_names[j->kind]);
    memset(p, 0x3c, 1000);
    void *q = aligned_block(j->kind, 3000);
    CHECK(q != NULL);
    fa_free(p);
    j->left = q;
    return NULL;
}

static void lab_counts(uint64_t *mallocs, uint64_t *frees)
{
    struct fa_lab_stats st;
    st.size = sizeof st;
    CHECK_EQ(fa_lab_check(), 0);
    CHECK_EQ(fa_lab_stats_get(&st), 0);
    *mallocs = st.mallocs + st.direct_allocs;
    *frees = st.frees + st.direct_frees;
}

static void *run_job(int kind)
{
    if (kind == 6) {
        moved = fa_malloc(100);
        CHECK(moved != NULL);
    }
    struct job j = {kind, NULL};
    fa_test_on_thread(thread_main, &j);
    CHECK(j.left != NULL);
    return j.left;
}

static int child(void)
{
    CHECK_EQ(fa_option_get("mode"), 1);
    CHECK_EQ(fa_option_get("lock"), 1); /* thread */

    /* More threads, one after the other, than the lab has heap slots. */
    for (int i = 0; i < 1100; i++)
        fa_free(run_job(i % 5));
    printf("lab thread heaps: 1100 threads allocating only with aligned calls: ok\n");

    /* Blocks left by ended threads are freed for real, and nothing accumulates. In the normal
     * build the C library allocates through the lab too (thread creation): hence a margin. */
    fa_free(run_job(5));
    uint64_t mallocs, frees0, frees1;
    lab_counts(&mallocs, &frees0);
    uint64_t live0 = mallocs - frees0;
    for (int kind = 0; kind < KINDS; kind++) {
        for (int i = 0; i < 64; i++) {
            void *left = run_job(kind);
            lab_counts(&mallocs, &frees0);
            fa_free(left); /* a remote free into the ended thread's heap */
            lab_counts(&mallocs, &frees1);
            CHECK_MSG(frees1 >= frees0 + 1,
                      "%s, thread %d: free() of the block the thread left is not counted (the "
                      "heap of the ended thread does not take its remote frees back)",
                      kind_names[kind], i);
            CHECK_MSG(mallocs - frees1 <= live0 + 8,
                      "%s, thread %d: %llu live blocks, %llu at the start", kind_names[kind], i,
                      (unsigned long long)(mallocs - frees1), (unsigned long long)live0);
        }
        printf("lab thread heaps: blocks of threads allocating only with %s: ok\n",
               kind_names[kind]);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--child") == 0)
        return child();
    const char *env[] = {"FITALLOC_MODE=lab", "FITALLOC_LOCK=thread", "FITALLOC_LAB_ARENA",
                         "FITALLOC_LAB_DIRECT", NULL};
    char *args[] = {argv[0], (char *)"--child", NULL};
    fa_test_rerun("the lab run", env, args);
    printf("lab/lab_thread_exit: ok\n");
    return 0;
}

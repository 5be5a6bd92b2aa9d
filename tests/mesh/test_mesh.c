/* Meshing (FITALLOC_MESH=1): a heap whose blocks died at random gives its memory back, and the
 * blocks that live keep their data; statistics and the heap walk count them; frees from other
 * threads reach meshed pages, and a producer's page emptied by its consumer stays with the
 * producer; a second free is still caught; pages detached but not meshed go
 * back to their heap; posix_spawn and system() run after meshing. Each case runs in a fresh
 * process with meshing on; fa_collect() runs a mesh pass at once. test_mesh_threads.c has the
 * cases with threads writing during meshes. */
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

#include "child.h"
#include "mesh_test.h"
#include "threads.h"

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
    allocate_blocks();
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

/* Frees from another thread into meshed pages. */
static void *free_odd(void *arg)
{
    size_t *freed = arg;
    for (size_t i = 1; i < count; i += 2) {
        *freed += blocks[i] != NULL;
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
    size_t freed = 0;
    CHECK_EQ(pthread_create(&t, NULL, free_odd, &freed), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK(freed > 0);
    fa_collect();
    size_t live = check_blocks();
    struct area_sum sum = {0};
    fa_heap_visit(sum_pages, &sum);
    /* The pass collected the frees into meshed and detached pages; the few pages the heap kept
     * in its queue (heap.c: a class keeps spare pages) count theirs until their owner takes them
     * back (fitalloc-stats.h). */
    CHECK(sum.used >= live && sum.used <= live + freed);
    free_all();
}

/* Pages left sparse by another thread's frees go to the mesher too, once their owner takes
 * the frees back (its next slow path), and mesh. */
static void *free_most_remotely(void *arg)
{
    free_most((uint64_t)(uintptr_t)arg);
    return NULL;
}

static void case_remote_sparse(void)
{
    allocate_blocks();
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, free_most_remotely, (void *)(uintptr_t)10), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_EQ(fa_test_stats().mesh_detached, 0);
    /* Enough mallocs of another class to pass through the slow path a few times. */
    void *other[64];
    for (size_t i = 0; i < 64; i++)
        other[i] = fa_malloc(4000);
    CHECK(fa_test_stats().mesh_detached > 0);
    fa_collect();
    CHECK(fa_test_stats().mesh_merges > 0);
    check_blocks();
    for (size_t i = 0; i < 64; i++)
        fa_free(other[i]);
    free_all();
}

/* A page that another thread's frees leave sparse while its heap has no other page of the
 * class to allocate from (a producer whose consumer frees what it made) stays with the heap
 * and serves its next mallocs: it is not given to the mesher to come back at once. */
#define PRODUCED 2500 /* about two and a half 64 KiB pages of 64-byte blocks */
static void *consume(void *arg)
{
    void **made = arg;
    for (size_t i = 0; i < PRODUCED; i++)
        if (i % 10) {
            fa_free(made[i]);
            made[i] = NULL;
        }
    return NULL;
}

static void case_producer(void)
{
    static void *made[PRODUCED], *again[PRODUCED];
    uintptr_t low = UINTPTR_MAX, high = 0;
    for (size_t i = 0; i < PRODUCED; i++) {
        made[i] = fa_malloc(BLOCK);
        CHECK(made[i]);
        low = (uintptr_t)made[i] < low ? (uintptr_t)made[i] : low;
        high = (uintptr_t)made[i] > high ? (uintptr_t)made[i] : high;
    }
    fa_test_on_thread(consume, made);
    /* A malloc that takes the slow path, where the heap takes back its pages the consumer
     * freed into, and a mesh pass. */
    void *other = fa_malloc(4000);
    CHECK_EQ(fa_test_stats().mesh_detached, 0);
    fa_collect();
    /* As many again as were freed: every one fits in the 64 KiB pages already made. */
    low &= ~(uintptr_t)0xffff;
    high |= 0xffff;
    for (size_t i = 0; i < PRODUCED * 8 / 10; i++) {
        again[i] = fa_malloc(BLOCK);
        CHECK(again[i]);
        CHECK_MSG((uintptr_t)again[i] >= low && (uintptr_t)again[i] <= high,
                  "block %zu at %p, outside the first pages [%p, %p]", i, again[i], (void *)low,
                  (void *)high);
    }
    CHECK_EQ(fa_test_stats().mesh_detached, 0);
    fa_free(other);
    for (size_t i = 0; i < PRODUCED; i++) {
        fa_free(made[i]);
        fa_free(i < PRODUCED * 8 / 10 ? again[i] : NULL);
    }
}

/* Pages whose blocks are all freed, one page after the other (a structure torn down), pass their
 * sparse trigger on their way to empty: none goes to the mesher, each is released. Pages left
 * sparse go to the mesher once they have stayed so for a while (heap.c: FA_MESH_SETTLE_MS),
 * at the heap's next slow path. */
#define SETTLE_BLOCKS 10000 /* about 10 pages of 64-byte blocks: fewer than the candidates */
static void case_settle(void)
{
    static void *held[SETTLE_BLOCKS];
    for (size_t i = 0; i < SETTLE_BLOCKS; i++) {
        held[i] = fa_malloc(BLOCK);
        CHECK(held[i]);
    }
    for (size_t i = 0; i < SETTLE_BLOCKS; i++)
        fa_free(held[i]);
    CHECK_EQ(fa_test_stats().mesh_detached, 0);

    for (size_t i = 0; i < SETTLE_BLOCKS; i++)
        held[i] = fa_malloc(BLOCK);
    for (size_t i = 0; i < SETTLE_BLOCKS; i++)
        if (i % 8) {
            fa_free(held[i]);
            held[i] = NULL;
        }
    struct timespec pause = {0, 30 * 1000 * 1000};
    nanosleep(&pause, NULL);
    void *other = fa_malloc(4000); /* a slow path: a new page of another class */
    CHECK(fa_test_stats().mesh_detached > 0);
    fa_free(other);
    for (size_t i = 0; i < SETTLE_BLOCKS; i++)
        fa_free(held[i]);
}

/* fork with no other thread that could write (the copy for the child is made without
 * write-protecting the parent's pages): each process keeps its own data. */
static void case_fork_alone(void)
{
    fragment(6);
    CHECK(fa_test_stats().mesh_saved > 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        check_blocks();
        for (size_t i = 0; i < count; i++)
            if (blocks[i])
                fa_pattern_fill(blocks[i], BLOCK, ~tags[i]);
        _exit(0);
    }
    for (size_t i = 0; i < count; i++)
        if (blocks[i])
            fa_pattern_fill(blocks[i], BLOCK, tags[i] + 1);
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
    for (size_t i = 0; i < count; i++)
        if (blocks[i])
            CHECK(fa_pattern_find_bad(blocks[i], BLOCK, tags[i] + 1) == (size_t)-1);
    free_all();
}

/* posix_spawn and system() after meshing (they share the parent's memory until exec and run
 * no fork handlers): the programs run, and the parent's blocks are intact. */
extern char **environ;

static void case_spawn(void)
{
    fragment(9);
    CHECK(fa_test_stats().mesh_saved > 0);
    for (int round = 0; round < 3; round++) {
        pid_t pid;
        char *args[] = {(char *)"sh", (char *)"-c", (char *)"exit 7", NULL};
        CHECK_EQ(posix_spawn(&pid, "/bin/sh", NULL, NULL, args, environ), 0);
        int status;
        CHECK_EQ(waitpid(pid, &status, 0), pid);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 7);
        status = system("exit 5");
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 5);
        check_blocks();
    }
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
    /* The first eight run with meshing on; reattach with meshing's passes held back. */
    static const struct mesh_case cases[] = {{"fragment", case_fragment},
                                             {"remote", case_remote_free},
                                             {"remote-sparse", case_remote_sparse},
                                             {"producer", case_producer},
                                             {"settle", case_settle},
                                             {"double-free", case_double_free},
                                             {"spawn", case_spawn},
                                             {"fork-alone", case_fork_alone},
                                             {"reattach", case_reattach}};
    const size_t n = sizeof cases / sizeof cases[0];
    if (argc < 2) {
        mesh_rerun_cases(argv[0], cases, n - 1);
        const char *no_pass_env[] = {"FITALLOC_MESH=1", "FITALLOC_PURGE_THREAD=0",
                                     "FITALLOC_MESH_PERIOD=1000s", NULL};
        char *reattach_args[] = {argv[0], (char *)"reattach", NULL};
        fa_test_rerun("reattach", no_pass_env, reattach_args);
        return 0;
    }
    return mesh_run_case(argv[1], cases, n);
}

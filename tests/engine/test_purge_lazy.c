/* ctest labels: threads */
/* Issue 38: the purge thread starts only once there is something to purge, and then memory
 * still goes back to the OS while the program is idle. Each case runs in a process of its own
 * (FITALLOC_PURGE_DELAY=50ms), counting its threads in /proc/self/task:
 *   alloc:   mallocs of every kind, nothing freed: one thread, no purger;
 *   free:    a large block freed: the purger exists when free returns, and the memory goes
 *            back while the program makes no allocator call;
 *   realloc: a large block shrunk by realloc: its tail goes back to the OS at once, and the
 *            memory stays given back while the program is idle;
 *   exit:    a thread that ends holding blocks (its heap parked, for the purger to abandon):
 *            the purger exists once it has been joined;
 *   fork:    a fork child of a process whose purger runs has no purger of its own until it
 *            frees, and then gives its memory back while idle;
 *   off:     with FITALLOC_PURGE_THREAD=0, no thread after all of the above. */
#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "fitalloc.h"
#include "rerun.h"
#include "threads.h"
#include "stats.h"
#include "purge_test.h"

#define MIB (1024ul * 1024ul)

/* The fork case's child starts the purger after a fork made while the parent's ran. */
FA_TEST_TSAN_OPTIONS("die_after_fork=0:atexit_sleep_ms=0")

/* The process has `n` threads; under TSan at least `n` (it starts a thread of its own at the
 * first pthread_create, the purger's included). */
static void expect_threads(int n)
{
    int threads = fa_test_thread_count();
    if (FA_TEST_TSAN)
        CHECK_GE(threads, n);
    else
        CHECK_EQ(threads, n);
}

/* Wait, making no allocator call (fa_stats_get makes none), until committed memory is below
 * `limit`; CHECK it within 10 s. */
static void idle_until_committed_below(uint64_t limit, const char *what)
{
    double start = now_s();
    uint64_t committed = fa_test_stats().committed;
    while (committed >= limit && now_s() < start + 10) {
        struct timespec pause = {0, 10 * 1000 * 1000};
        nanosleep(&pause, NULL);
        committed = fa_test_stats().committed;
    }
    CHECK_MSG(committed < limit, "%s: committed %llu bytes after 10 s idle (limit %llu)", what,
              (unsigned long long)committed, (unsigned long long)limit);
}

/* A large block written whole (its pages resident), not freed. */
static char *large_block(size_t n)
{
    char *p = fa_malloc(n);
    CHECK(p != NULL);
    memset(p, 0x5a, n);
    return p;
}

/* Allocations that queue nothing for the purger: no page emptied, no large block freed. */
static void allocate_only(void)
{
    for (int i = 0; i < 1000; i++)
        CHECK(fa_malloc(16 + (size_t)(i % 50) * 40) != NULL);
    CHECK(fa_calloc(1, 300000) != NULL);
    CHECK(fa_realloc(fa_malloc(100), 5000) != NULL);
    void *aligned = NULL;
    CHECK_EQ(fa_posix_memalign(&aligned, 4096, 100000), 0);
}

static void case_alloc(void)
{
    allocate_only();
    expect_threads(1);
}

static void case_free(void)
{
    allocate_only();
    uint64_t before = fa_test_stats().committed;
    char *p = large_block(16 * MIB);
    expect_threads(1);
    fa_free(p);
    expect_threads(2);
    idle_until_committed_below(before + 4 * MIB, "a freed 16 MiB block");
}

static void case_realloc(void)
{
    uint64_t before = fa_test_stats().committed;
    char *p = large_block(16 * MIB);
    expect_threads(1);
    p = fa_realloc(p, MIB);
    CHECK(p != NULL);
    idle_until_committed_below(before + 4 * MIB, "a 16 MiB block shrunk to 1 MiB");
}

static void *hold_blocks(void *arg)
{
    (void)arg;
    for (int i = 0; i < 64; i++)
        CHECK(fa_malloc(200) != NULL);
    return NULL;
}

static void case_exit(void)
{
    allocate_only();
    fa_test_on_thread(hold_blocks, NULL);
    expect_threads(2);
}

static void case_fork(void)
{
    fa_free(large_block(4 * MIB));
    expect_threads(2);
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        expect_threads(1);
        allocate_only();
        uint64_t before = fa_test_stats().committed;
        char *p = large_block(16 * MIB);
        fa_free(p);
        expect_threads(2);
        idle_until_committed_below(before + 4 * MIB, "a fork child's freed 16 MiB block");
        _exit(0);
    }
    int status = 0;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the fork child failed");
}

static void case_off(void)
{
    CHECK_EQ(fa_option_get("purge_thread"), 0);
    allocate_only();
    fa_free(large_block(16 * MIB));
    char *p = large_block(16 * MIB);
    CHECK(fa_realloc(p, MIB) != NULL);
    fa_test_on_thread(hold_blocks, NULL);
    expect_threads(1);
}

static const struct {
    const char *name;
    void (*run)(void);
    const char *purge_thread;
} cases[] = {
    {"alloc", case_alloc, "FITALLOC_PURGE_THREAD=1"},
    {"free", case_free, "FITALLOC_PURGE_THREAD=1"},
    {"realloc", case_realloc, "FITALLOC_PURGE_THREAD=1"},
    {"exit", case_exit, "FITALLOC_PURGE_THREAD=1"},
    {"fork", case_fork, "FITALLOC_PURGE_THREAD=1"},
    {"off", case_off, "FITALLOC_PURGE_THREAD=0"},
};

int main(int argc, char **argv)
{
    size_t count = sizeof cases / sizeof *cases;
    if (argc > 1) {
        for (size_t i = 0; i < count; i++) {
            if (strcmp(argv[1], cases[i].name) == 0) {
                CHECK_EQ(fa_option_get("purge_delay"), 50);
                cases[i].run();
                return 0;
            }
        }
        CHECK_MSG(0, "no case named %s", argv[1]);
    }
    for (size_t i = 0; i < count; i++) {
        const char *env[] = {cases[i].purge_thread, "FITALLOC_PURGE_DELAY=50", NULL};
        char *args[] = {argv[0], (char *)cases[i].name, NULL};
        fa_test_rerun(cases[i].name, env, args);
    }
    printf("engine/purge_lazy: ok\n");
    return 0;
}

/* The policy lab (FITALLOC_MODE=lab) across fork() while other threads allocate, for each thread
 * strategy: FITALLOC_LOCK=global, thread and arenas. The test runs itself again once per strategy;
 * there three threads loop on malloc/free (with realloc and aligned blocks) of many sizes and
 * pass blocks to each other, while the main thread forks several times. Each child checks that
 * the blocks made before the fork are intact, frees and reallocates them (also those of the
 * threads that do not exist in the child), allocates and frees thousands of blocks of several
 * sizes (small to 1 MiB, aligned ones, calloc zeroed), passes fa_lab_check() and exits 0; a
 * deadlock in the lab's locks kills it with SIGALRM. The parent checks every child's status. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blk.h"
#include "check.h"
#include "rerun.h"
#include "fitalloc-lab.h"
#include "fitalloc.h"

#define NWORKERS 3
#define WSLOTS 64
#define XSLOTS 32
#define MINE 64

#if FA_TEST_TSAN
/* The child of a multi-threaded fork allocates; it starts no thread. No 1 s sleep at the exit of
 * each of the test's processes (all threads are joined by then). */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
    return "die_after_fork=0:atexit_sleep_ms=0";
}
#endif

static atomic_int stop;
static atomic_ulong worker_ops;
static pthread_mutex_t xlock = PTHREAD_MUTEX_INITIALIZER;
static blk xslots[XSLOTS]; /* blocks passed between the workers, guarded by xlock */
static blk mine[MINE];     /* the main thread's */

static void blk_new(blk *b, fa_rng *r, size_t max)
{
    size_t n = fa_rng_logsize(r, max);
    unsigned how = (unsigned)fa_rng_below(r, 8);
    b->p = how == 0   ? fa_aligned_alloc((size_t)64 << fa_rng_below(r, 7), n)
           : how == 1 ? fa_calloc(1, n)
                      : fa_malloc(n);
    if (how == 1 && b->p)
        CHECK_BYTES(b->p, n, 0);
    blk_fill(b, n);
}

static void blk_grow(blk *b, fa_rng *r)
{
    CHECK_PATTERN(b->p, b->n, b->id);
    size_t n = b->n + 1 + (size_t)fa_rng_below(r, 3 * b->n + 100);
    unsigned char *q = fa_realloc(b->p, n);
    CHECK(q != NULL);
    CHECK_PATTERN(q, b->n, b->id);
    b->p = q;
    b->n = n;
    fa_pattern_fill(q, n, b->id);
}

static void *worker(void *arg)
{
    fa_rng r;
    fa_rng_seed(&r, (uint64_t)(intptr_t)arg);
    blk slots[WSLOTS];
    memset(slots, 0, sizeof slots);
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        for (int k = 0; k < 32; k++) {
            blk *b = &slots[fa_rng_below(&r, WSLOTS)];
            if (b->p && fa_rng_below(&r, 4) == 0)
                blk_grow(b, &r);
            else {
                if (b->p)
                    blk_del(b);
                blk_new(b, &r, fa_rng_below(&r, 64) ? 8192 : 1 << 20);
            }
        }
        blk *b = &slots[fa_rng_below(&r, WSLOTS)];
        blk *x = &xslots[fa_rng_below(&r, XSLOTS)];
        blk give = *b;
        pthread_mutex_lock(&xlock);
        *b = *x;
        *x = give;
        pthread_mutex_unlock(&xlock);
        atomic_fetch_add(&worker_ops, 1);
    }
    for (int i = 0; i < WSLOTS; i++)
        if (slots[i].p)
            blk_del(&slots[i]);
    return NULL;
}

static void child_main(int iteration)
{
    alarm(30); /* a deadlock: SIGALRM */
    fa_rng r;
    fa_rng_seed(&r, 1000 + (uint64_t)iteration);
    for (int i = 0; i < MINE; i++) {
        if (i % 3 == 0)
            blk_grow(&mine[i], &r);
        else if (i % 3 == 1) {
            blk_del(&mine[i]);
            blk_new(&mine[i], &r, 100000);
        } else
            CHECK_PATTERN(mine[i].p, mine[i].n, mine[i].id);
    }
    for (int i = 0; i < XSLOTS; i++) { /* the workers' blocks: their threads are gone */
        if (!xslots[i].p)
            continue;
        if (i % 2)
            blk_del(&xslots[i]);
        else {
            blk_grow(&xslots[i], &r);
            blk_del(&xslots[i]);
        }
    }
    static blk v[1024];
    for (int round = 0; round < 4; round++) {
        size_t max = round == 0 ? 64 : round == 1 ? 4096 : round == 2 ? 65536 : 1 << 20;
        int n = round == 3 ? 128 : 1024;
        for (int i = 0; i < n; i++)
            blk_new(&v[i], &r, max);
        for (int i = 0; i < n; i += 2)
            blk_del(&v[i]);
        for (int i = 0; i < n; i += 2)
            blk_new(&v[i], &r, max);
        for (int i = 0; i < n; i++)
            blk_del(&v[(i * 389) % n]);
    }
    CHECK_EQ(fa_lab_check(), 0);
    struct fa_lab_stats st;
    st.size = sizeof st;
    CHECK_EQ(fa_lab_stats_get(&st), 0);
    CHECK_GE(st.mallocs, 4800);
    CHECK_LE(st.frees, st.mallocs);
    for (int i = 0; i < MINE; i++)
        blk_del(&mine[i]);
    CHECK_EQ(fa_lab_check(), 0);
    _exit(0);
}

static int run(const char *lock)
{
    CHECK_EQ(fa_option_get("mode"), 1);
    static const char *const locks[] = {"global", "thread", "arenas"};
    long long l = fa_option_get("lock");
    CHECK_MSG(l >= 0 && l < 3 && strcmp(locks[l], lock) == 0, "FITALLOC_LOCK is %lld, not %s", l,
              lock);
    int forks = (FA_TEST_TSAN ? 3 : 8) * (int)fa_test_scale();

    fa_rng r;
    fa_rng_seed(&r, 1);
    for (int i = 0; i < MINE; i++)
        blk_new(&mine[i], &r, 200000);
    pthread_t th[NWORKERS];
    for (int t = 0; t < NWORKERS; t++)
        CHECK_EQ(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)(t + 1)), 0);

    for (int f = 0; f < forks; f++) {
        unsigned long target = atomic_load(&worker_ops) + 4;
        while (atomic_load(&worker_ops) < target)
            sched_yield();
        for (int k = 0; k < 16; k++) { /* main allocates right up to the fork */
            int i = (int)fa_rng_below(&r, MINE);
            blk_del(&mine[i]);
            blk_new(&mine[i], &r, 200000);
        }
        pthread_mutex_lock(&xlock);
        pid_t pid = fork();
        CHECK(pid >= 0);
        pthread_mutex_unlock(&xlock);
        if (pid == 0)
            child_main(f);
        int status = 0;
        CHECK_EQ(waitpid(pid, &status, 0), pid);
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "lock %s, fork %d: child %s %d%s",
                  lock, f, WIFEXITED(status) ? "exited with" : "killed by signal",
                  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
                  WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM ? " (SIGALRM: deadlock)" : "");
    }
    atomic_store(&stop, 1);
    for (int t = 0; t < NWORKERS; t++)
        CHECK_EQ(pthread_join(th[t], NULL), 0);
    for (int i = 0; i < XSLOTS; i++)
        if (xslots[i].p)
            blk_del(&xslots[i]);
    for (int i = 0; i < MINE; i++)
        blk_del(&mine[i]);
    CHECK_EQ(fa_lab_check(), 0);
    printf("lab, lock %s: %d forks ok\n", lock, forks);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "--lock") == 0)
        return run(argv[2]);
    static const char *const locks[] = {"global", "thread", "arenas"};
    for (int i = 0; i < 3; i++) {
        char lock[64];
        snprintf(lock, sizeof lock, "FITALLOC_LOCK=%s", locks[i]);
        const char *env[] = {"FITALLOC_MODE=lab", lock, "FITALLOC_LAB_ARENA", NULL};
        char *args[] = {argv[0], (char *)"--lock", (char *)locks[i], NULL};
        fa_test_rerun(lock, env, args);
    }
    printf("reliability/lab_fork: ok\n");
    return 0;
}

/* fork() while other threads allocate: the child must be able to allocate,
 * free (also blocks from other threads' heaps), create a thread and exit.
 * A child that deadlocks in the allocator is killed by alarm() (SIGALRM) and
 * the test fails. */
#define _GNU_SOURCE
#include <errno.h>
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
#include "fitalloc.h"

#define NWORKERS 3
#define WSLOTS 64
#define XSLOTS 32
#define MINE 64

#if FA_TEST_TSAN
/* fitalloc (re)starts its purge thread in a fork child; TSan would kill any
 * child that starts a thread after a multi-threaded fork. The test's own child
 * starts no thread under TSan. */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
    return "die_after_fork=0";
}
#endif

static atomic_int stop;
static pthread_mutex_t xlock = PTHREAD_MUTEX_INITIALIZER;
static blk xslots[XSLOTS]; /* blocks made by workers, guarded by xlock */
static blk mine[MINE];     /* blocks made by main */
static atomic_ulong worker_ops;

static void blk_new(blk *b, size_t n)
{
    b->p = (unsigned char *)fa_malloc(n);
    blk_fill(b, n);
}

static void *worker(void *arg)
{
    fa_rng r;
    fa_rng_seed(&r, (uint64_t)(intptr_t)arg);
    blk slots[WSLOTS];
    memset(slots, 0, sizeof slots);
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        for (int k = 0; k < 64; k++) {
            blk *b = &slots[fa_rng_below(&r, WSLOTS)];
            if (b->p)
                blk_del(b);
            size_t n = fa_rng_below(&r, 256) == 0 ? (size_t)fa_rng_below(&r, 2u << 20)
                                                  : fa_rng_logsize(&r, 16384);
            blk_new(b, n);
        }
        /* hand one block over to the exchange, take back what was there */
        blk *b = &slots[fa_rng_below(&r, WSLOTS)];
        blk *x = &xslots[fa_rng_below(&r, XSLOTS)];
        blk mineb = *b;
        pthread_mutex_lock(&xlock);
        *b = *x;
        *x = mineb;
        pthread_mutex_unlock(&xlock);
        if (b->p)
            CHECK_PATTERN(b->p, b->n, b->id);
        atomic_fetch_add(&worker_ops, 1);
    }
    for (int i = 0; i < WSLOTS; i++)
        if (slots[i].p)
            blk_del(&slots[i]);
    return NULL;
}

static void *child_thread(void *arg)
{
    (void)arg;
    fa_rng r;
    fa_rng_seed(&r, 99);
    blk b[128];
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < 128; i++)
            blk_new(&b[i], fa_rng_logsize(&r, 65536));
        for (int i = 0; i < 128; i++)
            blk_del(&b[i]);
    }
    return NULL;
}

static void child_main(int iteration)
{
    alarm(30); /* a deadlock kills the child with SIGALRM */
    fa_rng r;
    fa_rng_seed(&r, 1000 + (uint64_t)iteration);

    /* blocks main made before the fork: intact, freeable, replaceable */
    for (int i = 0; i < MINE; i++) {
        CHECK_PATTERN(mine[i].p, mine[i].n, mine[i].id);
        if (i % 2) {
            blk_del(&mine[i]);
            blk_new(&mine[i], fa_rng_logsize(&r, 100000));
        }
    }
    /* blocks made by the workers (whose threads do not exist here) */
    for (int i = 0; i < XSLOTS; i++) {
        if (xslots[i].p == NULL)
            continue;
        CHECK_PATTERN(xslots[i].p, xslots[i].n, xslots[i].id);
        if (i % 2)
            blk_del(&xslots[i]);
        else {
            unsigned char *q = (unsigned char *)fa_realloc(xslots[i].p, xslots[i].n + 1000);
            CHECK(q != NULL);
            CHECK_PATTERN(q, xslots[i].n, xslots[i].id);
            fa_free(q);
            xslots[i].p = NULL;
        }
    }
    /* lots of sizes, including large */
    static blk v[512];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 512; i++) {
            size_t n = (i % 128 == 0) ? ((size_t)1 << 20) + (size_t)fa_rng_below(&r, 4u << 20)
                                      : fa_rng_logsize(&r, 1u << 16);
            blk_new(&v[i], n);
        }
        for (int i = 0; i < 512; i++)
            blk_del(&v[(i * 37) % 512]);
    }
    void *c = fa_calloc(1000, 100);
    CHECK(c != NULL);
    CHECK_BYTES(c, 100000, 0);
    fa_free(c);
    struct fa_stats s;
    s.size = sizeof s;
    CHECK_EQ(fa_stats_get(&s), 0);
    CHECK_GE(s.allocs, 1536);

/* Not under the sanitizers: TSan does not support threads after a multi-threaded fork, and
 * gcc 12's ASan runtime does not hold its own allocator's lock across fork, so a child whose
 * parent had a thread inside ASan's malloc deadlocks in pthread_create (3 runs in 20 here). */
#if !FA_TEST_SANITIZED
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, child_thread, NULL), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
#else
    (void)child_thread;
#endif
    for (int i = 0; i < MINE; i++)
        blk_del(&mine[i]);
    _exit(0);
}

int main(void)
{
    unsigned scale = fa_test_scale();
    int forks = 25 * (int)scale;
    if (FA_TEST_TSAN)
        forks /= 4;

    fa_rng r;
    fa_rng_seed(&r, 1);
    for (int i = 0; i < MINE; i++)
        blk_new(&mine[i], fa_rng_logsize(&r, 200000));

    pthread_t th[NWORKERS];
    for (int t = 0; t < NWORKERS; t++)
        CHECK_EQ(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)(t + 1)), 0);

    for (int f = 0; f < forks; f++) {
        /* let the workers run a little between forks */
        unsigned long target = atomic_load(&worker_ops) + 3;
        while (atomic_load(&worker_ops) < target)
            sched_yield();
        /* main allocates too, right up to the fork */
        for (int k = 0; k < 16; k++) {
            int i = (int)fa_rng_below(&r, MINE);
            blk_del(&mine[i]);
            blk_new(&mine[i], fa_rng_logsize(&r, 200000));
        }
        pthread_mutex_lock(&xlock); /* the exchange is consistent in the child */
        pid_t pid = fork();
        CHECK(pid >= 0);
        pthread_mutex_unlock(&xlock);
        if (pid == 0)
            child_main(f);
        int status = 0;
        CHECK_EQ(waitpid(pid, &status, 0), pid);
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "fork %d: child %s %d%s", f,
                  WIFEXITED(status) ? "exited with" : "killed by signal",
                  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
                  (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) ? " (SIGALRM: deadlock)"
                                                                       : "");
    }

    atomic_store(&stop, 1);
    for (int t = 0; t < NWORKERS; t++)
        CHECK_EQ(pthread_join(th[t], NULL), 0);
    for (int i = 0; i < XSLOTS; i++)
        if (xslots[i].p)
            blk_del(&xslots[i]);
    for (int i = 0; i < MINE; i++)
        blk_del(&mine[i]);
    printf("threads/fork: ok (%d forks)\n", forks);
    return 0;
}

/* The frame of the fork tests: FORK_STRESS_WORKERS threads churn blocks of their own and, after
 * each round, swap one of them with a shared exchange, while the main thread, holding blocks of
 * its own, forks again and again. Each child runs the test's checks and must exit 0; one that
 * deadlocks is killed by alarm() (SIGALRM) and reported as such. Header-only, like check.h. */
#ifndef FITALLOC_TESTS_FORK_STRESS_H
#define FITALLOC_TESTS_FORK_STRESS_H

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blk.h"
#include "check.h"

#define FORK_STRESS_WORKERS 3
#define WSLOTS 64 /* blocks a worker holds */
#define XSLOTS 32 /* blocks in the exchange */
#define MINE 64   /* blocks the main thread holds */

/* The children allocate after a multi-threaded fork, which TSan refuses by default; and no 1 s
 * sleep at the exit of each of the test's processes (every thread is joined by then). */
FA_TEST_TSAN_OPTIONS("die_after_fork=0:atexit_sleep_ms=0")

/* One round of a worker's churn over its slots. */
typedef void (*fork_stress_round_fn)(blk *slots, int nslots, fa_rng *r);

static atomic_int fork_stress_stop;
static atomic_ulong fork_stress_rounds; /* rounds done by all workers */
static pthread_mutex_t fork_stress_xlock = PTHREAD_MUTEX_INITIALIZER;
static blk xslots[XSLOTS]; /* blocks made by workers, guarded by fork_stress_xlock */
static blk mine[MINE];     /* the main thread's */
static fork_stress_round_fn fork_stress_round;
static pthread_t fork_stress_threads[FORK_STRESS_WORKERS];

static void *fork_stress_worker(void *arg)
{
    fa_rng r;
    fa_rng_seed(&r, (uint64_t)(intptr_t)arg);
    blk slots[WSLOTS];
    memset(slots, 0, sizeof slots);
    while (!atomic_load_explicit(&fork_stress_stop, memory_order_relaxed)) {
        fork_stress_round(slots, WSLOTS, &r);
        /* Hand one block over to the exchange, take back what was there (made by another
         * thread, or before a fork). */
        blk *b = &slots[fa_rng_below(&r, WSLOTS)];
        blk *x = &xslots[fa_rng_below(&r, XSLOTS)];
        blk give = *b;
        pthread_mutex_lock(&fork_stress_xlock);
        *b = *x;
        *x = give;
        pthread_mutex_unlock(&fork_stress_xlock);
        if (b->p)
            CHECK_PATTERN(b->p, b->n, b->id);
        atomic_fetch_add(&fork_stress_rounds, 1);
    }
    for (int i = 0; i < WSLOTS; i++)
        if (slots[i].p)
            blk_del(&slots[i]);
    return NULL;
}

static inline void fork_stress_start(fork_stress_round_fn round)
{
    fork_stress_round = round;
    for (int t = 0; t < FORK_STRESS_WORKERS; t++)
        CHECK_EQ(pthread_create(&fork_stress_threads[t], NULL, fork_stress_worker,
                                (void *)(intptr_t)(t + 1)),
                 0);
}

/* Let the workers run `rounds` more rounds. */
static inline void fork_stress_wait(unsigned long rounds)
{
    unsigned long target = atomic_load(&fork_stress_rounds) + rounds;
    while (atomic_load(&fork_stress_rounds) < target)
        sched_yield();
}

/* Fork; the child runs child(iteration) (which must _exit); the parent waits and CHECKs that
 * the child exited with 0, the message naming `what` and the iteration. */
static inline void fork_stress_fork(void (*child)(int), int iteration, const char *what)
{
    pthread_mutex_lock(&fork_stress_xlock); /* the exchange is consistent in the child */
    pid_t pid = fork();
    CHECK(pid >= 0);
    pthread_mutex_unlock(&fork_stress_xlock);
    if (pid == 0) {
        alarm(30);
        child(iteration);
        _exit(0);
    }
    int status = 0;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s, fork %d: child %s %d%s", what,
              iteration, WIFEXITED(status) ? "exited with" : "killed by signal",
              WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
              WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM ? " (SIGALRM: deadlock)" : "");
}

/* Stop and join the workers; free the exchange's and the main thread's blocks. */
static inline void fork_stress_finish(void)
{
    atomic_store(&fork_stress_stop, 1);
    for (int t = 0; t < FORK_STRESS_WORKERS; t++)
        CHECK_EQ(pthread_join(fork_stress_threads[t], NULL), 0);
    for (int i = 0; i < XSLOTS; i++)
        if (xslots[i].p)
            blk_del(&xslots[i]);
    for (int i = 0; i < MINE; i++)
        blk_del(&mine[i]);
}

#endif

/* What the tests of giving memory back share (test_purge_*.c, test_idle_heads.c): the clock in
 * seconds, ordinary work that passes through the slow paths, and the main of a test whose
 * program leaves main with pthread_exit. Header-only, like tests/common. */
#ifndef FITALLOC_TESTS_PURGE_TEST_H
#define FITALLOC_TESTS_PURGE_TEST_H

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "fitalloc.h"
#include "rerun.h"
#include "threads.h"

/* CLOCK_MONOTONIC in seconds. */
static inline double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Ordinary work: n blocks (at most 512) of many sizes, allocated, written and freed. */
static inline void busy_work(fa_rng *r, int n)
{
    void *b[512];
    CHECK(n <= 512);
    for (int i = 0; i < n; i++) {
        size_t size = fa_rng_logsize(r, 20000);
        b[i] = fa_malloc(size);
        CHECK(b[i] != NULL);
        memset(b[i], 1, size < 64 ? size : 64);
    }
    for (int i = 0; i < n; i++)
        fa_free(b[i]);
}

/* Start `worker` and leave main with pthread_exit: the process ends after its last thread. */
static inline void leave_main_to(void *(*worker)(void *))
{
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, worker, NULL), 0);
    pthread_exit(NULL);
}

/* The main of a test whose `program` leaves main with pthread_exit: the test runs itself again
 * with the purge thread on and a 50 ms purge delay (the run named `what`), which forks the
 * program (fa_test_fork_program) and requires it to end by itself; then "<test>: ok". */
static inline int purge_test_exit_main(int argc, char **argv, void (*program)(void),
                                       const char *what, const char *test)
{
    if (argc > 1 && strcmp(argv[1], "program") == 0)
        program();
    if (argc > 1 && strcmp(argv[1], "run") == 0) {
        fa_test_fork_program(program, argv[0], "program");
        return 0;
    }
    const char *env[] = {"FITALLOC_PURGE_THREAD=1", "FITALLOC_PURGE_DELAY=50", NULL};
    char *args[] = {argv[0], (char *)"run", NULL};
    fa_test_rerun(what, env, args);
    printf("%s: ok\n", test);
    return 0;
}

#endif

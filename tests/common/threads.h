/* Threads in the tests: those of this process, counted in /proc/self/task (opendir allocates:
 * not for a test that must make no allocator call); a function run on a thread of its own; a
 * thread that holds blocks; a forked program that must end after its last thread. Header-only,
 * like check.h. */
#ifndef FITALLOC_TESTS_THREADS_H
#define FITALLOC_TESTS_THREADS_H

#include <dirent.h>
#include <pthread.h>
#include <unistd.h>

#include "check.h"
#include "child.h"
#include "fitalloc.h"

static inline int fa_test_thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    CHECK(d != NULL);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

static inline void *fa_test_thread_wait(void *arg)
{
    for (;;)
        pause();
    return arg;
}

/* ThreadSanitizer starts a thread of its own, which never ends, in a fork child, unless the
 * fork was made while another thread of the program ran. A test whose fork child must end by
 * itself after its last thread calls this before the fork: a thread that waits for good (the
 * process's exit ends it). fitalloc's purge thread, when it ran in every process, did this. */
static inline void fa_test_tsan_thread_before_fork(void)
{
    if (!FA_TEST_TSAN)
        return;
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, fa_test_thread_wait, NULL), 0);
    CHECK_EQ(pthread_detach(t), 0);
}

/* Fork `program`, which must end by itself (it leaves main with pthread_exit, the process ends
 * after its last thread), and CHECK that it does within 60 s, with status 0. Under ASan the
 * child runs the test anew with the argument `again` (gcc 12's ASan runtime does not hold its
 * allocator's lock across fork); under TSan it must not (a new process would have TSan's
 * background thread, which never ends). */
static inline void fa_test_fork_program(void (*program)(void), char *argv0, const char *again)
{
    fa_test_tsan_thread_before_fork();
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        if (FA_TEST_ASAN) {
            execl("/proc/self/exe", argv0, again, (char *)NULL);
            _exit(127);
        }
        program();
        _exit(0);
    }
    int status = 0;
    CHECK_MSG(fa_test_wait_ends(pid, 60, &status), "the program did not end after its worker");
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the program's status: %s %d",
              WIFEXITED(status) ? "exit" : "signal",
              WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

/* fn(arg) on a thread of its own, waited for. */
static inline void fa_test_on_thread(void *(*fn)(void *), void *arg)
{
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, fn, arg), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
}

/* A thread that holds blocks while the main thread looks at the heap: it allocates n blocks
 * (block i of size(i) bytes), meets the main thread at the barrier (of 2) once the blocks are
 * made, meets it again once the main thread has looked, and exits without freeing them. */
struct fa_test_holder {
    void **blocks;
    int n;
    size_t (*size)(int i);
    pthread_barrier_t barrier;
};

static inline void *fa_test_holder_main(void *arg)
{
    struct fa_test_holder *h = arg;
    for (int i = 0; i < h->n; i++) {
        h->blocks[i] = fa_malloc(h->size(i));
        CHECK(h->blocks[i] != NULL);
    }
    pthread_barrier_wait(&h->barrier); /* blocks made */
    pthread_barrier_wait(&h->barrier); /* the main thread has looked */
    return NULL;
}

#endif

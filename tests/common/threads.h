/* The threads of this process, counted in /proc/self/task (opendir allocates: not for a test
 * that must make no allocator call). Header-only, like check.h. */
#ifndef FITALLOC_TESTS_THREADS_H
#define FITALLOC_TESTS_THREADS_H

#include <dirent.h>
#include <pthread.h>
#include <unistd.h>

#include "check.h"

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

#endif

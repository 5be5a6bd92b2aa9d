/* The threads of this process, counted in /proc/self/task (opendir allocates: not for a test
 * that must make no allocator call). Header-only, like check.h. */
#ifndef FITALLOC_TESTS_THREADS_H
#define FITALLOC_TESTS_THREADS_H

#include <dirent.h>

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

#endif

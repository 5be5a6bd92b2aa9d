/* Worker threads started together and joined, as the threaded workloads run them. (Needs
 * _GNU_SOURCE, for program_invocation_short_name.) */
#ifndef BENCH_THREADS_H
#define BENCH_THREADS_H

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define BENCH_MAX_THREADS 1024

/* Runs fn on `count` threads at once and waits for them all: thread t is given
 * `args + t * stride`, or t itself when args is NULL. Returns the sum of what the threads
 * return, read as integers; exit(1) with a message if one cannot be started. */
static inline uint64_t run_threads(long count, void *(*fn)(void *), void *args, size_t stride)
{
    pthread_t th[BENCH_MAX_THREADS];
    for (long t = 0; t < count; t++) {
        void *arg = args ? (char *)args + (size_t)t * stride : (void *)(intptr_t)t;
        if (t >= BENCH_MAX_THREADS || pthread_create(&th[t], NULL, fn, arg)) {
            fprintf(stderr, "%s: pthread_create failed\n", program_invocation_short_name);
            exit(1);
        }
    }
    uint64_t sum = 0;
    for (long t = 0; t < count; t++) {
        void *ret;
        pthread_join(th[t], &ret);
        sum += (uint64_t)(uintptr_t)ret;
    }
    return sum;
}

#endif

/* cache-scratch: passive false sharing (after Hoard's cache-scratch).
 *
 * Main allocates one object per thread, back to back (so they likely share a cache line), and
 * gives one to each of the threads (--threads, default 4). Each thread frees the object it was
 * given, then repeatedly allocates its own object (--object-size bytes, default 8), writes and
 * reads it REPEAT times (--repeat) and frees it. An allocator that hands a thread the object
 * another thread's line came from (the one it just freed) keeps the threads writing to one
 * cache line; one that serves each thread from its own memory does not. With one thread (and
 * 1-byte objects: the case scratch-1) nothing is shared: what is left is where the allocator
 * puts a tiny object that is written many times, and the cost of its malloc and free.
 * Objects x repetitions per thread: smoke 20,000 x 500, real (= full) 100,000 x 1,000 (the
 * same objects with --repeat R: R repetitions at every size).
 *
 * usage: cache-scratch --size smoke|real|full [--threads N] [--object-size B] [--repeat R]
 * prints: time_s, ok cache-scratch <checksum>
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/args.h"
#include "lib/cache_objects.h"
#include "lib/threads.h"
#include "lib/timing.h"

#define USAGE                                                                                      \
    "cache-scratch --size smoke|real|full [--threads N (1..64, default 4)] "                       \
    "[--object-size B (1..64, default 8)] [--repeat R (default by size)]"
#define MAX_THREADS 64
#define MAX_OBJ_SIZE 64

static long objects, repeat, obj_size;
static unsigned char *given[MAX_THREADS];

static void *worker(void *arg)
{
    uint64_t id = (uint64_t)(intptr_t)arg;
    if (given[id][0] != (unsigned char)(0xa0 + id)) {
        fprintf(stderr, "cache-scratch: CORRUPTION: the object given to thread %d\n", (int)id);
        exit(1);
    }
    free(given[id]);
    return (void *)(uintptr_t)cache_objects(objects, (size_t)obj_size, repeat, id);
}

int main(int argc, char **argv)
{
    static const char *const keys[] = {"--threads", "--object-size", "--repeat", NULL};
    enum bench_size size = bench_parse(argc, argv, USAGE, keys);
    long threads = bench_opt_long(argc, argv, "--threads", 4, USAGE);
    obj_size = bench_opt_long(argc, argv, "--object-size", 8, USAGE);
    if (threads < 1 || threads > MAX_THREADS || obj_size < 1 || obj_size > MAX_OBJ_SIZE)
        bench_usage(USAGE);
    objects = size == BENCH_SMOKE ? 20000 : 100000;
    repeat = bench_opt_long(argc, argv, "--repeat", size == BENCH_SMOKE ? 500 : 1000, USAGE);
    if (repeat < 1)
        bench_usage(USAGE);
    for (int t = 0; t < threads; t++) {
        given[t] = malloc((size_t)obj_size);
        if (!given[t]) {
            fprintf(stderr, "cache-scratch: malloc failed\n");
            return 1;
        }
        given[t][0] = (unsigned char)(0xa0 + t);
    }
    double t0 = now_s();
    uint64_t sum = run_threads(threads, worker, NULL, 0);
    printf("time_s %.6f\nok cache-scratch %016llx\n", now_s() - t0, (unsigned long long)sum);
    return 0;
}

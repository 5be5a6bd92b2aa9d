/* cache-thrash: active false sharing (after Hoard's cache-thrash).
 *
 * 4 threads; each repeatedly allocates an 8-byte object, writes and reads it REPEAT times, and
 * frees it. An allocator that hands objects of one cache line to different threads makes the
 * cores fight over that line (false sharing) and the run slows down many times; one that keeps
 * each thread's small objects apart does not. The object's bytes are checked after the writes.
 * Objects x repetitions per thread: smoke 20,000 x 500, real (= full) 100,000 x 1,000.
 *
 * usage: cache-thrash --size smoke|real|full   prints: time_s, ok cache-thrash <checksum>
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

#define USAGE "cache-thrash --size smoke|real|full"
#define THREADS 4
#define OBJ_SIZE 8

static long objects, repeat;

static void *worker(void *arg)
{
    uint64_t id = (uint64_t)(intptr_t)arg;
    return (void *)(uintptr_t)cache_objects(objects, OBJ_SIZE, repeat, id);
}

int main(int argc, char **argv)
{
    enum bench_size size = bench_parse(argc, argv, USAGE, NULL);
    objects = size == BENCH_SMOKE ? 20000 : 100000;
    repeat = size == BENCH_SMOKE ? 500 : 1000;
    double t0 = now_s();
    uint64_t sum = run_threads(THREADS, worker, NULL, 0);
    printf("time_s %.6f\nok cache-thrash %016llx\n", now_s() - t0, (unsigned long long)sum);
    return 0;
}

/* ctest labels: threads */
/* The heap profiler under threads, through the fa_* API (so that the TSan build, whose malloc
 * is the sanitizer's, runs it too): run again with FITALLOC_PROFILE at a 4 KiB rate and a
 * signal; 4 threads allocate, and free blocks of each other's (the sampled among them go
 * through the other thread's slow path), while one raises the signal. Then:
 *   - the peak and exit files and the signal's file are written, each with its header;
 *   - the peak file holds more than 1 MiB of samples; the exit file (every block of the test
 *     freed, by whichever thread) under 64 KiB: what the C library itself keeps, when its
 *     malloc is fitalloc's. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fitalloc.h"
#include "rerun.h"

#define THREADS 4
#define SLOTS 4096

static void *slots[THREADS][SLOTS];
static pthread_barrier_t barrier;

static void *worker(void *arg)
{
    int me = (int)(intptr_t)arg;
    fa_rng r;
    fa_rng_seed(&r, (uint64_t)me + 1);
    unsigned long steps = fa_test_ops(50000);
    for (int round = 0; round < 2; round++) {
        for (unsigned long i = 0; i < steps; i++) {
            void **slot = &slots[me][fa_rng_below(&r, SLOTS)];
            fa_free(*slot);
            *slot = fa_malloc(fa_rng_logsize(&r, 1 << 20));
            CHECK(*slot != NULL);
        }
        if (me == 0 && round == 0)
            raise(SIGUSR2);
        /* Hand the blocks over: each thread frees its neighbour's. */
        pthread_barrier_wait(&barrier);
        int other = (me + 1) % THREADS;
        for (int i = 0; i < SLOTS; i += 2) {
            fa_free(slots[other][i]);
            slots[other][i] = NULL;
        }
        pthread_barrier_wait(&barrier);
    }
    return NULL;
}

/* The first line of prefix.pid.name.heap: its live count and bytes. */
static void header_of(const char *prefix, pid_t pid, const char *name, unsigned long long *count,
                      unsigned long long *bytes)
{
    char path[4200], line[256];
    snprintf(path, sizeof path, "%s.%d.%s.heap", prefix, (int)pid, name);
    FILE *f = fopen(path, "r");
    CHECK_MSG(f != NULL, "%s was not written", path);
    CHECK(fgets(line, sizeof line, f) != NULL);
    fclose(f);
    CHECK_MSG(sscanf(line, "heap profile: %llu: %llu [", count, bytes) == 2 &&
                  strstr(line, "@ heap_v2/4096"),
              "%s: header %s", path, line);
}

int main(int argc, char **argv)
{
    (void)argc;
    if (!getenv("FITALLOC_PROFILE")) {
        char prefix[] = "/tmp/fitalloc-profile-XXXXXX";
        CHECK(mkdtemp(prefix) != NULL);
        char setting[128];
        snprintf(setting, sizeof setting, "FITALLOC_PROFILE=%s/p", prefix);
        const char *env[] = {setting, "FITALLOC_PROFILE_RATE=4K", "FITALLOC_PROFILE_SIGNAL=SIGUSR2",
                             NULL};
        pid_t pid = fa_test_rerun("profiled", env, argv);
        char file_prefix[128];
        snprintf(file_prefix, sizeof file_prefix, "%s/p", prefix);
        unsigned long long count, bytes;
        header_of(file_prefix, pid, "peak", &count, &bytes);
        CHECK_GT(bytes, 1 << 20);
        header_of(file_prefix, pid, "1", &count, &bytes);
        header_of(file_prefix, pid, "exit", &count, &bytes);
        CHECK_LT(bytes, 64 << 10);
        char cmd[256];
        snprintf(cmd, sizeof cmd, "rm -rf %s", prefix);
        CHECK(system(cmd) == 0);
        return 0;
    }
    pthread_barrier_init(&barrier, NULL, THREADS);
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_create(&threads[i], NULL, worker, (void *)(intptr_t)i) == 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    for (int t = 0; t < THREADS; t++)
        for (int i = 0; i < SLOTS; i++)
            fa_free(slots[t][i]);
    /* The signal's file is written at a safe point of an allocation after it. */
    fa_free(fa_malloc(100));
    return 0;
}

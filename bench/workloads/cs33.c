/* cs33: the two multithreaded malloc programs of Brown CS33 (workloads.md §5).
 *
 * --test 1: per-thread churn. --threads (default 32) detached threads; main ends with
 *   pthread_exit(0), so the process exits when the last thread is done (the result line is
 *   printed by an atexit handler). --exit join makes them joinable and main joins them
 *   instead (the thread sweep uses it: it measures scaling, not process exit). Each thread: p = malloc(8 * ((i % 64) + 1)); write; free.
 *   The total number of pairs is fixed (32 x iters), split evenly over the threads, so a sweep
 *   over --threads (the bench's thread-scaling curve) does the same work at every point.
 *   iters: smoke 250,000, real 1,000,000, full 10,000,000 (the original: 3.2e8 pairs).
 *   If the process is still alive 2 s after its last thread finished (a thread the program
 *   did not create keeps it alive), it is killed with a message instead of hanging.
 * --test 2: producer/consumer pairs. --threads pairs (default 16). A producer mallocs batches
 *   of 1024 blocks of 4 * ((j % 64) + 1) B into a ring of 10,240 pointers; its consumer frees
 *   them: every free is a cross-thread free. Semaphores: empty = 10 batches, occupied = 0.
 *   batches: smoke 256, real 1024, full 8192 (the original).
 * Every block carries a tag checked before it is freed.
 *
 * usage: cs33 --size smoke|real|full --test 1|2 [--threads N] [--exit pthread|join]
 * prints: `threads N`, `pairs N` (test 1) or `mallocs N` (test 2), `time_s`; then
 * `ok cs33 <checksum>`.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/args.h"
#include "lib/pattern.h"
#include "lib/timing.h"

#define USAGE "cs33 --size smoke|real|full --test 1|2 [--threads N] [--exit pthread|join]"
#define N 64
#define ALLOCS_PER_ITER 1024
#define BUF_SIZE 10240
#define MAX_THREADS 1024

/* ---- test 1 ---- */

static long iters_per_thread;
static int joined; /* --exit join */
static int nthreads;
static _Atomic uint64_t checksum;
static _Atomic int finished;
static double start_time;

/* Called by the last thread before it returns: the process must now exit. A forked child checks
 * two seconds later; if its parent is still there (a thread the program did not create, the
 * allocator's?, keeps it alive), it says so and kills it, so the run fails instead of hanging.
 * WHY a process: a timer signal could stay pending forever if that thread blocks signals. */
static void watch_exit(void)
{
    pid_t parent = getpid();
    if (fork() != 0)
        return;
    struct timespec grace = {2, 0};
    nanosleep(&grace, NULL);
    if (getppid() == parent) {
        static const char msg[] = "cs33: the process is still alive 2 s after its last thread "
                                  "finished: a thread it did not create keeps it running\n";
        ssize_t w = write(2, msg, sizeof msg - 1);
        (void)w;
        kill(parent, SIGKILL);
    }
    _exit(0);
}

static void *churn(void *arg)
{
    uint64_t id = (uint64_t)(intptr_t)arg, sum = 0;
    for (long i = 0; i < iters_per_thread; i++) {
        size_t n = 8 * (size_t)((i % N) + 1);
        uint64_t tag = mix64((id << 40) ^ (uint64_t)i);
        void *p = tagged_malloc(n, tag);
        tagged_check(p, n, tag);
        sum += n;
        free(p);
    }
    checksum += mix64(sum ^ id);
    if (++finished == nthreads && !joined)
        watch_exit();
    return NULL;
}

/* Runs when the last detached thread exits (pthread_exit in main = exit(0) then). */
static void report_test1(void)
{
    if (finished != nthreads) {
        fprintf(stderr, "cs33: only %d of %d threads finished\n", (int)finished, nthreads);
        _exit(1);
    }
    double elapsed = now_s() - start_time;
    printf("threads %d\npairs %ld\ntime_s %.6f\n", nthreads, iters_per_thread * nthreads, elapsed);
    printf("ok cs33 %016llx\n", (unsigned long long)checksum);
}

static void test1(long total_pairs, int join)
{
    static pthread_t th[MAX_THREADS];
    iters_per_thread = total_pairs / nthreads;
    atexit(report_test1);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    if (!join)
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    start_time = now_s();
    for (int t = 0; t < nthreads; t++) {
        if (pthread_create(&th[t], &attr, churn, (void *)(intptr_t)t)) {
            fprintf(stderr, "cs33: pthread_create failed\n");
            exit(1);
        }
    }
    if (!join)
        pthread_exit(0);
    for (int t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
    exit(0);
}

/* ---- test 2 ---- */

struct pair {
    sem_t empty, occupied;
    void *buf[BUF_SIZE];
    long iters;
    uint64_t id, sum;
};

static uint64_t block_tag(uint64_t id, uint64_t seq)
{
    return mix64((id << 48) ^ seq);
}

static void *producer(void *arg)
{
    struct pair *pr = arg;
    int in = 0;
    uint64_t seq = 0;
    for (long i = 0; i < pr->iters; i++) {
        sem_wait(&pr->empty);
        for (int j = 0; j < ALLOCS_PER_ITER; j++, seq++) {
            size_t n = 4 * (size_t)((j % N) + 1);
            pr->buf[in] = tagged_malloc(n, block_tag(pr->id, seq));
            in = (in + 1) % BUF_SIZE;
        }
        sem_post(&pr->occupied);
    }
    return NULL;
}

static void *consumer(void *arg)
{
    struct pair *pr = arg;
    int out = 0;
    uint64_t seq = 0, sum = 0;
    for (long i = 0; i < pr->iters; i++) {
        sem_wait(&pr->occupied);
        for (int j = 0; j < ALLOCS_PER_ITER; j++, seq++) {
            size_t n = 4 * (size_t)((j % N) + 1);
            void *p = pr->buf[out];
            tagged_free(p, n, block_tag(pr->id, seq));
            sum += n;
            out = (out + 1) % BUF_SIZE;
        }
        sem_post(&pr->empty);
    }
    pr->sum = sum;
    return NULL;
}

static int test2(long iters)
{
    int npairs = nthreads;
    struct pair *pairs = calloc((size_t)npairs, sizeof *pairs);
    pthread_t *th = calloc(2 * (size_t)npairs, sizeof *th);
    if (!pairs || !th) {
        fprintf(stderr, "cs33: out of memory\n");
        return 1;
    }
    double t0 = now_s();
    for (int k = 0; k < npairs; k++) {
        struct pair *pr = &pairs[k];
        sem_init(&pr->empty, 0, BUF_SIZE / ALLOCS_PER_ITER);
        sem_init(&pr->occupied, 0, 0);
        pr->iters = iters;
        pr->id = (uint64_t)k;
        if (pthread_create(&th[2 * k], NULL, producer, pr) ||
            pthread_create(&th[2 * k + 1], NULL, consumer, pr)) {
            fprintf(stderr, "cs33: pthread_create failed\n");
            return 1;
        }
    }
    for (int k = 0; k < 2 * npairs; k++)
        pthread_join(th[k], NULL);
    double elapsed = now_s() - t0;
    uint64_t sum = 0;
    for (int k = 0; k < npairs; k++)
        sum = mix64(sum ^ pairs[k].sum);
    printf("threads %d\nmallocs %ld\ntime_s %.6f\n", 2 * npairs,
           iters * ALLOCS_PER_ITER * (long)npairs, elapsed);
    printf("ok cs33 %016llx\n", (unsigned long long)sum);
    free(th);
    free(pairs);
    return 0;
}

int main(int argc, char **argv)
{
    static const char *const keys[] = {"--test", "--threads", "--exit", NULL};
    enum bench_size size = bench_parse(argc, argv, USAGE, keys);
    long test = bench_opt_long(argc, argv, "--test", 0, USAGE);
    if (test == 1) {
        nthreads = (int)bench_opt_long(argc, argv, "--threads", 32, USAGE);
        if (nthreads < 1 || nthreads > MAX_THREADS)
            bench_usage(USAGE);
        long iters = size == BENCH_FULL ? 10000000 : size == BENCH_REAL ? 1000000 : 250000;
        const char *how = bench_opt(argc, argv, "--exit", "pthread");
        if (strcmp(how, "join") != 0 && strcmp(how, "pthread") != 0)
            bench_usage(USAGE);
        joined = strcmp(how, "join") == 0;
        test1(32 * iters, joined);
    } else if (test == 2) {
        nthreads = (int)bench_opt_long(argc, argv, "--threads", 16, USAGE);
        if (nthreads < 1 || nthreads > MAX_THREADS)
            bench_usage(USAGE);
        return test2(size == BENCH_FULL ? 8192 : size == BENCH_REAL ? 1024 : 256);
    }
    bench_usage(USAGE);
}

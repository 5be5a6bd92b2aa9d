/* ece650-ts: Duke ECE650 HW2, thread-safe malloc (workloads.md §1).
 *
 * The kit's four test programs in one, each with its original parameters:
 *   thread_test    4 threads x 10,000 concurrent mallocs of 128..512 B, nothing freed
 *   malloc_free    same; every 10th malloc a thread frees its own oldest block
 *   change_thread  same; every 10th malloc a thread frees the next thread's oldest block
 *   measurement    THE experiment: 4 x 20,000 mallocs of 128..1024 B; threads 0 and 2 free
 *                  thread 1's and thread 3's oldest blocks every 4th malloc; timed from thread
 *                  creation to the last join, heap growth measured over the same window
 * MALLOC/FREE are malloc/free: the lab's lock modes (global, thread, arenas) under best fit stand
 * for the kit's lock and no-lock versions. Sizes come from glibc rand() after srand(0), exactly
 * as in the kit, and the check values of §0.1 are asserted. After the joins, the live blocks
 * must not overlap (half-open intervals, lib/overlap.h); every block carries a tag that is
 * checked before it is freed. The originals take ~0.1 s, so every size runs them unchanged.
 *
 * usage: ece650-ts --size smoke|real|full [--test all|tests|thread_test|malloc_free|
 *                                                 change_thread|measurement]
 * (tests: the three thread tests; all: them and the measurement. The measurement should run in
 * a process of its own, as in the kit: after other tests its heap would already have grown.)
 * prints: per test `<test>.passed 1` and `<test>.frees N`; for measurement also the kit's lines
 * (Execution Time, Data Segment Size) and measurement.time_s, measurement.sbrk_growth (program
 * break, what the kit measured), measurement.heap_growth and measurement.lab.* (lab only);
 * then `ok ece650-ts <checksum>` (a hash of the size sequences).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/args.h"
#include "lib/lab.h"
#include "lib/overlap.h"
#include "lib/pattern.h"
#include "lib/threads.h"
#include "lib/timing.h"

#define USAGE                                                                                      \
    "ece650-ts --size smoke|real|full "                                                            \
    "[--test all|tests|thread_test|malloc_free|change_thread|measurement]"
#define NUM_THREADS 4
#define MAX_ITEMS 20000 /* per thread */
#define CHUNK 32

/* The kit's free flag: 0 = allocated, 1 = freed (or, in two tests, "not allocated yet"). */
enum { ALLOCATED = 0, FREED = 1 };

struct item {
    size_t bytes;
    void *address;
    _Atomic int free_flag;
};

struct test {
    const char *name;
    void *(*thread_body)(void *);
    int nitems; /* per thread */
    int min_chunks, max_chunks;
    int initial_flag;
    size_t first_sizes[8]; /* check values of workloads.md §0.1 */
    uint64_t size_sum;
};

static struct item items[NUM_THREADS * MAX_ITEMS];
static int nitems;
static pthread_barrier_t barrier;
static pthread_mutex_t test_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic long frees_done;

static uint64_t tag_of(long idx)
{
    return mix64((uint64_t)idx + 1);
}

static void alloc_item(long idx)
{
    struct item *it = &items[idx];
    void *p = malloc(it->bytes);
    if (!p) {
        fprintf(stderr, "ece650-ts: malloc(%zu) failed\n", it->bytes);
        exit(1);
    }
    tag_write(p, it->bytes, tag_of(idx));
    it->address = p;
    /* WHY release: another thread may free this block once it sees the flag. */
    atomic_store_explicit(&it->free_flag, ALLOCATED, memory_order_release);
}

static void free_block(long idx)
{
    struct item *it = &items[idx];
    if (!tag_ok(it->address, it->bytes, tag_of(idx))) {
        fprintf(stderr, "ece650-ts: CORRUPTION: block %ld (%zu B at %p) was overwritten\n", idx,
                it->bytes, it->address);
        exit(1);
    }
    free(it->address);
}

/* Free items[idx] if it is allocated; the kit decides under a test-level mutex. */
static int try_free_other(long idx)
{
    pthread_mutex_lock(&test_lock);
    int take = atomic_load_explicit(&items[idx].free_flag, memory_order_acquire) == ALLOCATED;
    if (take)
        atomic_store_explicit(&items[idx].free_flag, FREED, memory_order_relaxed);
    pthread_mutex_unlock(&test_lock);
    if (take) {
        free_block(idx);
        frees_done++;
    }
    return take;
}

static void *thread_test(void *arg)
{
    long own = (long)(intptr_t)arg * nitems;
    pthread_barrier_wait(&barrier);
    for (int i = 0; i < nitems; i++)
        alloc_item(own + i);
    pthread_barrier_wait(&barrier);
    return NULL;
}

static void *malloc_free(void *arg)
{
    long own = (long)(intptr_t)arg * nitems, counter = own;
    pthread_barrier_wait(&barrier);
    for (int i = 0; i < nitems; i++) {
        alloc_item(own + i);
        if (i % 10 == 0) { /* at i = 0 this is the block just allocated */
            atomic_store_explicit(&items[counter].free_flag, FREED, memory_order_relaxed);
            free_block(counter++);
            frees_done++;
        }
    }
    pthread_barrier_wait(&barrier);
    return NULL;
}

static void *change_thread(void *arg)
{
    int t = (int)(intptr_t)arg;
    long own = (long)t * nitems, counter = (long)((t + 1) % NUM_THREADS) * nitems;
    pthread_barrier_wait(&barrier);
    for (int i = 0; i < nitems; i++) {
        alloc_item(own + i);
        if (i % 10 == 0 && try_free_other(counter))
            counter++;
    }
    pthread_barrier_wait(&barrier);
    return NULL;
}

static void *measurement(void *arg)
{
    int t = (int)(intptr_t)arg;
    long own = (long)t * nitems, counter = (long)((t + 1) % NUM_THREADS) * nitems;
    pthread_barrier_wait(&barrier);
    for (int i = 0; i < nitems; i++) {
        alloc_item(own + i);
        if (t % 2 == 0 && i % 4 == 0 && try_free_other(counter))
            counter++;
    }
    pthread_barrier_wait(&barrier);
    return NULL;
}

static const struct test tests[] = {
    {"thread_test",
     thread_test,
     10000,
     4,
     16,
     ALLOCATED,
     {128, 416, 480, 256, 160, 160, 512, 224},
     12809856},
    {"malloc_free",
     malloc_free,
     10000,
     4,
     16,
     ALLOCATED,
     {128, 416, 480, 256, 160, 160, 512, 224},
     12809856},
    {"change_thread",
     change_thread,
     10000,
     4,
     16,
     FREED,
     {128, 416, 480, 256, 160, 160, 512, 224},
     12809856},
    {"measurement",
     measurement,
     20000,
     4,
     32,
     FREED,
     {384, 416, 224, 928, 672, 224, 128, 896},
     46034368},
};

/* The kit draws every size in main, in index order, before any thread starts. */
static void draw_sizes(const struct test *t)
{
    long n = (long)NUM_THREADS * t->nitems;
    uint64_t sum = 0;
    srand(0);
    for (long i = 0; i < n; i++) {
        int chunks = rand() % (t->max_chunks - t->min_chunks + 1) + t->min_chunks;
        items[i].bytes = (size_t)CHUNK * (size_t)chunks;
        items[i].address = NULL;
        atomic_store(&items[i].free_flag, t->initial_flag);
        sum += items[i].bytes;
    }
    for (int i = 0; i < 8; i++)
        if (items[i].bytes != t->first_sizes[i] || sum != t->size_sum) {
            fprintf(stderr,
                    "ece650-ts: %s: sizes differ from the kit's (size[%d] %zu, want %zu; sum %llu, "
                    "want %llu): rand() is not glibc's\n",
                    t->name, i, items[i].bytes, t->first_sizes[i], (unsigned long long)sum,
                    (unsigned long long)t->size_sum);
            exit(1);
        }
}

static void run_test(const struct test *t)
{
    nitems = t->nitems;
    draw_sizes(t);
    frees_done = 0;
    pthread_barrier_init(&barrier, NULL, NUM_THREADS);

    struct fa_lab_stats lab_before, lab_after;
    int lab = lab_stats(&lab_before);
    uintptr_t brk_before = (uintptr_t)sbrk(0);
    double t0 = now_s();
    run_threads(NUM_THREADS, t->thread_body, NULL, 0);
    double elapsed = now_s() - t0;
    uintptr_t brk_after = (uintptr_t)sbrk(0);
    lab = lab && lab_stats(&lab_after);
    pthread_barrier_destroy(&barrier);

    long n = (long)NUM_THREADS * nitems, live = 0;
    struct region *r = malloc((size_t)n * sizeof *r);
    if (!r) {
        fprintf(stderr, "ece650-ts: malloc(regions) failed\n");
        exit(1);
    }
    for (long i = 0; i < n; i++)
        if (atomic_load(&items[i].free_flag) == ALLOCATED)
            r[live++] = (struct region){(uintptr_t)items[i].address, items[i].bytes, i};
    if (regions_overlap(r, (size_t)live)) {
        printf("Test failed\n");
        fprintf(stderr, "ece650-ts: CORRUPTION: %s: overlapping blocks\n", t->name);
        exit(1);
    }
    free(r);
    printf("No overlapping allocated regions found!\nTest passed\n");
    printf("%s.passed 1\n%s.frees %ld\n", t->name, t->name, (long)frees_done);

    if (t->thread_body == measurement) {
        size_t sbrk_growth = brk_after - brk_before;
        size_t heap_growth = lab ? lab_after.heap_bytes - lab_before.heap_bytes : sbrk_growth;
        printf("Execution Time = %f seconds\n", elapsed);
        printf("Data Segment Size = %zu bytes\n", heap_growth);
        printf("measurement.time_s %.6f\n", elapsed);
        printf("measurement.sbrk_growth %zu\n", sbrk_growth);
        if (lab) {
            printf("measurement.heap_growth %zu\n", heap_growth);
            lab_print("measurement.", &lab_after);
        }
    }
    for (long i = 0; i < n; i++)
        if (atomic_load(&items[i].free_flag) == ALLOCATED)
            free_block(i);
}

int main(int argc, char **argv)
{
    static const char *const keys[] = {"--test", NULL};
    bench_parse(argc, argv, USAGE, keys);
    const char *which = bench_opt(argc, argv, "--test", "all");
    uint64_t checksum = 0;
    int ran = 0;
    for (size_t k = 0; k < sizeof tests / sizeof tests[0]; k++) {
        int is_measurement = tests[k].thread_body == measurement;
        int wanted = strcmp(which, "all") == 0 || strcmp(which, tests[k].name) == 0 ||
                     (strcmp(which, "tests") == 0 && !is_measurement);
        if (!wanted)
            continue;
        run_test(&tests[k]);
        checksum = mix64(checksum ^ tests[k].size_sum ^ ((uint64_t)k << 56));
        ran++;
    }
    if (!ran)
        bench_usage(USAGE);
    printf("ok ece650-ts %016llx\n", (unsigned long long)checksum);
    return 0;
}

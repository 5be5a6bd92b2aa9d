/* ece650-fit: Duke ECE650 HW1, allocation policies and fragmentation (workloads.md §2).
 *
 * The kit's three timed programs, selected with --test:
 *   equal  10,000 blocks of 128 B interleaved with 10,000 spacing blocks; the array blocks are
 *          freed, then NUM_ITERS times: allocate 1,000, then 9,000 times allocate one and free
 *          the one allocated 1,000 before, then free the last 1,000. Fragmentation is sampled
 *          at i = NUM_ITERS/2, j = 5,000 (1,000 live array blocks, 9,000 holes).
 *          NUM_ITERS: smoke 400 (the sample sees the same state as at 10,000), real 2,000,
 *          full 10,000 (the original: 10^8 mallocs + frees).
 *   small  10,000 live blocks of 128..512 B (steps of 32); NUM_ITERS 100 times the current set
 *          is freed in shuffled order and the other set allocated in index order, 50 at a time.
 *   large  the same with 32..65,536 B and NUM_ITERS 50. Both measure at the end.
 * (small and large run their original parameters at every size.) Sizes and the shuffle come
 * from glibc rand() after srand(0), and the check values of §0.1 are asserted.
 * Fragmentation needs the allocator's free space, so it is printed only under the policy lab:
 * both metrics of §2.4, old = free space with headers / heap ("data segment") bytes, new =
 * 1 - largest free block / total free.
 *
 * usage: ece650-fit --size smoke|real|full --test equal|small|large
 * prints: the kit's lines (Execution Time, Fragmentation), `time_s`, `mallocs`, and under the lab
 * `frag_old`, `frag_new`, `segment_bytes`, `free_space_bytes`, `free_blocks`, `largest_free` and
 * lab.*; then `ok ece650-fit <checksum>`.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/args.h"
#include "lib/lab.h"
#include "lib/pattern.h"
#include "lib/timing.h"

#define USAGE "ece650-fit --size smoke|real|full --test equal|small|large"
#define NUM_ITEMS 10000
#define ALLOC_SIZE 128
#define BATCH 50

struct block {
    size_t bytes;
    void *address;
};

/* Print the fragmentation figures now (lab only): the kit's two library calls. */
static void sample_fragmentation(void)
{
    struct fa_lab_stats s;
    if (!lab_stats(&s))
        return;
    printf("Fragmentation  = %f\n", s.frag_free_over_heap);
    printf("frag_old %.6f\nfrag_new %.6f\n", s.frag_free_over_heap, s.frag_largest_over_free);
    printf("segment_bytes %llu\nfree_space_bytes %llu\n", (unsigned long long)s.heap_bytes,
           (unsigned long long)s.free_space_with_headers);
    printf("free_blocks %llu\nlargest_free %llu\n", (unsigned long long)s.free_blocks,
           (unsigned long long)s.largest_free);
    lab_print("", &s);
}

static uint64_t equal_size_allocs(int num_iters)
{
    static void *array[NUM_ITEMS], *spacing[NUM_ITEMS];
    const size_t n = ALLOC_SIZE;
    for (int i = 0; i < NUM_ITEMS; i++) {
        array[i] = tagged_malloc(n, mix64((uint64_t)i));
        spacing[i] = tagged_malloc(n, mix64((1ULL << 40) | (uint64_t)i));
    }
    for (int i = 0; i < NUM_ITEMS; i++)
        tagged_free(array[i], n, mix64((uint64_t)i));

    double t0 = now_s();
    for (int i = 0; i < num_iters; i++) {
        uint64_t it = (uint64_t)i << 20; /* tag of array[j] in iteration i: mix64(it | j) */
        for (int j = 0; j < 1000; j++)
            array[j] = tagged_malloc(n, mix64(it | (uint64_t)j));
        for (int j = 1000; j < NUM_ITEMS; j++) {
            array[j] = tagged_malloc(n, mix64(it | (uint64_t)j));
            tagged_free(array[j - 1000], n, mix64(it | (uint64_t)(j - 1000)));
            if (i == num_iters / 2 && j == NUM_ITEMS / 2)
                sample_fragmentation();
        }
        for (int j = 9000; j < NUM_ITEMS; j++)
            tagged_free(array[j], n, mix64(it | (uint64_t)j));
    }
    double elapsed = now_s() - t0;
    printf("Execution Time = %f seconds\ntime_s %.6f\n", elapsed, elapsed);
    printf("mallocs %llu\n", (unsigned long long)num_iters * NUM_ITEMS);
    for (int i = 0; i < NUM_ITEMS; i++)
        tagged_free(spacing[i], n, mix64((1ULL << 40) | (uint64_t)i));
    return (uint64_t)num_iters * NUM_ITEMS;
}

struct rand_test {
    int num_iters, min_chunks, max_chunks;
    size_t first[2][5]; /* check values, workloads.md §0.1 */
    uint64_t sum[2];
};

static const struct rand_test small_range = {
    100, 4, 16, {{128, 480, 160, 512, 160}, {416, 256, 160, 224, 352}}, {3179712, 3209600}};
static const struct rand_test large_range = {
    50,
    1,
    2048,
    {{44288, 3392, 35392, 35168, 58688}, {30944, 3712, 40960, 7584, 39360}},
    {325748416, 328312800}};
static const int first_free_list[5] = {7653, 2544, 8914, 6549, 610};

static uint64_t set_tag(int s, int i)
{
    return mix64(((uint64_t)s << 32) | (uint64_t)i);
}

static uint64_t range_rand_allocs(const struct rand_test *t)
{
    static struct block set[2][NUM_ITEMS];
    static int free_list[NUM_ITEMS];
    uint64_t sum[2] = {0, 0};

    srand(0);
    for (int i = 0; i < NUM_ITEMS; i++)
        for (int s = 0; s < 2; s++) {
            int chunks = rand() % (t->max_chunks - t->min_chunks + 1) + t->min_chunks;
            set[s][i].bytes = (size_t)32 * (size_t)chunks;
            sum[s] += set[s][i].bytes;
        }
    for (int i = 0; i < NUM_ITEMS; i++)
        free_list[i] = i;
    for (int i = NUM_ITEMS; i > 1;) { /* the kit's shuffle: note % i, not % (i + 1) */
        i--;
        int j = rand() % i, tmp = free_list[i];
        free_list[i] = free_list[j];
        free_list[j] = tmp;
    }
    int bad = sum[0] != t->sum[0] || sum[1] != t->sum[1];
    for (int k = 0; k < 5; k++)
        bad |= set[0][k].bytes != t->first[0][k] || set[1][k].bytes != t->first[1][k] ||
               free_list[k] != first_free_list[k];
    if (bad) {
        fprintf(stderr,
                "ece650-fit: sizes or shuffle differ from the kit's (sums %llu %llu): "
                "rand() is not glibc's\n",
                (unsigned long long)sum[0], (unsigned long long)sum[1]);
        exit(1);
    }

    for (int i = 0; i < NUM_ITEMS; i++)
        set[0][i].address = tagged_malloc(set[0][i].bytes, set_tag(0, i));
    double t0 = now_s();
    for (int i = 0; i < t->num_iters; i++) {
        int s = i % 2;
        for (int j = 0; j < NUM_ITEMS; j += BATCH) {
            for (int k = 0; k < BATCH; k++) {
                struct block *b = &set[s][free_list[j + k]];
                tagged_free(b->address, b->bytes, set_tag(s, free_list[j + k]));
            }
            for (int k = 0; k < BATCH; k++) {
                struct block *b = &set[1 - s][j + k];
                b->address = tagged_malloc(b->bytes, set_tag(1 - s, j + k));
            }
        }
    }
    double elapsed = now_s() - t0;
    struct fa_lab_stats st;
    if (lab_stats(&st))
        printf("data_segment_size = %llu, data_segment_free_space = %llu\n",
               (unsigned long long)st.heap_bytes, (unsigned long long)st.free_space_with_headers);
    printf("Execution Time = %f seconds\ntime_s %.6f\n", elapsed, elapsed);
    printf("mallocs %llu\n", (unsigned long long)t->num_iters * NUM_ITEMS);
    sample_fragmentation();
    int live = t->num_iters % 2; /* the set allocated last */
    for (int i = 0; i < NUM_ITEMS; i++)
        tagged_free(set[live][i].address, set[live][i].bytes, set_tag(live, i));
    return mix64(sum[0] ^ (sum[1] << 1) ^ (uint64_t)t->num_iters);
}

int main(int argc, char **argv)
{
    static const char *const keys[] = {"--test", NULL};
    enum bench_size size = bench_parse(argc, argv, USAGE, keys);
    const char *test = bench_opt(argc, argv, "--test", "");
    uint64_t checksum;
    if (strcmp(test, "equal") == 0)
        checksum = equal_size_allocs(size == BENCH_FULL ? 10000 : size == BENCH_REAL ? 2000 : 400);
    else if (strcmp(test, "small") == 0)
        checksum = range_rand_allocs(&small_range);
    else if (strcmp(test, "large") == 0)
        checksum = range_rand_allocs(&large_range);
    else
        bench_usage(USAGE);
    printf("ok ece650-fit %016llx\n", (unsigned long long)checksum);
    return 0;
}

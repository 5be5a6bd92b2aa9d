/* cse3320: the UT Arlington CSE3320 malloc benchmark (workloads.md §3.4).
 *
 * The sequence of the cse3320 report's benchmark, reconstructed from its appendix:
 *   p1 = malloc(P1); p2 = malloc(1024); p3 = malloc(35); free(p1)
 *   14,000 x A[i] = malloc(1024), and every 10th (i > 0) frees A[i] and does B[j++] = malloc(100)
 *   p4 = malloc(10); free(p4); p5 = malloc(1); free(p5)
 *   for k < 10,000: free(A[k]) unless k % 10 == 0, where it mallocs 150 B instead (leaked)
 *   free every B; free(p2); p3, A[10000..13999] and the 150-B blocks stay allocated.
 * --variant faithful uses P1 = 5,000,000,000 as the report did (its 32-bit counters wrapped);
 * portable uses P1 = 50,000,000, which changes only `requested` and `max_heap` (§3.4).
 * The counters are the lab's (policy lab only): the report printed them at exit, after stdio
 * had allocated stdout's buffer, so this program prints a first line (4096-B buffer when stdout
 * is a pipe, 1024 on a terminal) before it reads them. They count from the start of main: the
 * report's program allocated nothing before main, while here the runtime may (the allocator's
 * own thread's TLS block, for one); lab.* has the raw totals. Blocks carry tags checked before
 * free and, for the leaked ones, at the end. Tiny, so the same at every size.
 *
 * usage: cse3320 --size smoke|real|full [--variant portable|faithful]
 * prints: `time_s`, `p1_failed` (1 when malloc(P1) returned NULL), and under the lab the
 * report's counters `mallocs frees reuses grows splits coalesces blocks requested max_heap`
 * plus `free_blocks` and lab.*; then `ok cse3320 <checksum>`.
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

#define USAGE "cse3320 --size smoke|real|full [--variant portable|faithful]"
#define NA 14000
#define NB 10000
#define NLEAK 1000

static uint64_t a_tag(int i)
{
    return mix64((uint64_t)i);
}
static uint64_t b_tag(int j)
{
    return mix64((1ULL << 32) | (uint64_t)j);
}
static uint64_t leak_tag(int k)
{
    return mix64((2ULL << 32) | (uint64_t)k);
}

int main(int argc, char **argv)
{
    static const char *const keys[] = {"--variant", NULL};
    bench_parse(argc, argv, USAGE, keys);
    const char *variant = bench_opt(argc, argv, "--variant", "portable");
    size_t p1_size;
    if (strcmp(variant, "portable") == 0)
        p1_size = 50000000;
    else if (strcmp(variant, "faithful") == 0)
        p1_size = 5000000000;
    else
        bench_usage(USAGE);

    static void *A[NA], *B[NB], *leaked[NLEAK];
    struct fa_lab_stats at_start, s;
    int lab = lab_stats(&at_start);
    double t0 = now_s();
    void *p1 = malloc(p1_size); /* may fail: 5 GB needs over-commit; not a bug */
    void *p2 = tagged_malloc(1024, 1), *p3 = tagged_malloc(35, 2);
    free(p1);
    int j = 0;
    for (int i = 0; i < NA; i++) {
        A[i] = tagged_malloc(1024, a_tag(i));
        if (i % 10 == 0 && i > 0) {
            tagged_free(A[i], 1024, a_tag(i));
            B[j] = tagged_malloc(100, b_tag(j));
            j++;
        }
    }
    tagged_free(tagged_malloc(10, 3), 10, 3);
    tagged_free(tagged_malloc(1, 4), 1, 4);
    int nleak = 0;
    for (int k = 0; k < 10000; k++) {
        if (k % 10 != 0) {
            tagged_free(A[k], 1024, a_tag(k));
        } else {
            leaked[nleak] = tagged_malloc(150, leak_tag(nleak));
            nleak++;
        }
    }
    for (int m = 0; m < j; m++)
        tagged_free(B[m], 100, b_tag(m));
    tagged_free(p2, 1024, 1);
    double elapsed = now_s() - t0;

    /* Still allocated, as in the original: check them, do not free them. */
    tagged_check(p3, 35, 2);
    for (int i = 10000; i < NA; i++)
        if (i % 10 != 0) /* the others were freed in the first loop */
            tagged_check(A[i], 1024, a_tag(i));
    for (int k = 0; k < nleak; k++)
        tagged_check(leaked[k], 150, leak_tag(k));

    /* WHY print before reading the counters: the report's counters include stdout's buffer. */
    printf("\nheap management statistics (%s)\n", variant);
    fflush(stdout);
    if (lab && lab_stats(&s)) {
        /* Counted from the start of main (see above); blocks and max_heap are levels, and the
         * blocks allocated before main stay allocated, so their difference is this program's. */
#define SINCE_MAIN(f) printf(#f " %llu\n", (unsigned long long)(s.f - at_start.f));
        SINCE_MAIN(mallocs)
        SINCE_MAIN(frees)
        SINCE_MAIN(reuses)
        SINCE_MAIN(grows)
        SINCE_MAIN(splits)
        SINCE_MAIN(coalesces)
        SINCE_MAIN(blocks)
        SINCE_MAIN(requested)
        SINCE_MAIN(max_heap)
        SINCE_MAIN(free_blocks)
#undef SINCE_MAIN
        lab_print("", &s);
    }
    printf("time_s %.6f\np1_failed %d\n", elapsed, p1 == NULL);
    printf("ok cse3320 %016llx\n", (unsigned long long)mix64((uint64_t)j * 1000003 + nleak));
    return 0;
}

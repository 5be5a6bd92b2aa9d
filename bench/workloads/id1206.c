/* id1206: the KTH ID1206 palloc/pree benchmark on a 64 KiB arena (workloads.md §4.2).
 *
 * A buffer of --buffer slots (default 300, as in the report). Each of --loops steps draws
 * idx = rand() % buffer: a full slot is freed and cleared, an empty one gets a new block whose
 * size follows the seminar's rand.c (log-uniform 8..256 B: MAX / e^r with r uniform on a 1e-4
 * grid over [0, ln 32)). In the steady state about half the slots are full. glibc rand() with a
 * fixed --seed (the original used time(NULL)). The study ran it on a 64 KiB arena with and
 * without merging; the bench does that with the lab's segregated fit (FITALLOC_LAB_ARENA=65536,
 * FITALLOC_LAB_EXACT_MAX=80, FITALLOC_LAB_COALESCE=1|0). An allocation failure (arena full, the
 * study's "first implementation" fails near loop 2,000) is a result, not an error: the loop
 * stops and `failed_at` says where. Loops: smoke 200,000 (the reference model's figure),
 * real and full 1,000,000 (the report's).
 * stdout gets a static buffer, so that stdio allocates nothing from the 64 KiB arena.
 *
 * usage: id1206 --size smoke|real|full [--buffer N] [--loops N] [--seed N]
 * prints: the study's lines, `allocs`, `frees`, `failed_at` (0: no failure), and under the lab
 * `freelist_length`, `free_space` (payload bytes), `avg_free_block`, lab.* and the free-block
 * histogram as `hist <size> <count>` lines; then `ok id1206 <checksum>` (`-` after a failure,
 * since the run stopped early).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/args.h"
#include "lib/lab.h"
#include "lib/pattern.h"

#define USAGE "id1206 --size smoke|real|full [--buffer N] [--loops N] [--seed N]"
#define MAX 256
#define MIN 8
#define MAX_BUFFER 100000

/* The seminar's request(): log-uniform sizes, small ones dominate (mean 71.6 B). */
static int request(void)
{
    double k = log((double)MAX / MIN);
    double r = (double)(rand() % (int)(k * 10000)) / 10000;
    return (int)(MAX / exp(r));
}

struct slot {
    void *p;
    size_t size;
    uint64_t tag;
};

/* Check the block's tag and free it; false (with a message) when it was overwritten. */
static bool release(struct slot *s)
{
    if (!tag_ok(s->p, s->size, s->tag)) {
        fprintf(stderr, "id1206: CORRUPTION: block of %zu B at %p was overwritten\n", s->size,
                s->p);
        return false;
    }
    free(s->p);
    s->p = NULL;
    return true;
}

int main(int argc, char **argv)
{
    static const char *const keys[] = {"--buffer", "--loops", "--seed", NULL};
    enum bench_size size = bench_parse(argc, argv, USAGE, keys);
    long bufsize = bench_opt_long(argc, argv, "--buffer", 300, USAGE);
    long loops =
        bench_opt_long(argc, argv, "--loops", size == BENCH_SMOKE ? 200000 : 1000000, USAGE);
    long seed = bench_opt_long(argc, argv, "--seed", 1, USAGE);
    if (bufsize < 1 || bufsize > MAX_BUFFER)
        bench_usage(USAGE);

    static char out_buf[1 << 16];
    setvbuf(stdout, out_buf, _IOFBF, sizeof out_buf);

    static struct slot buffer[MAX_BUFFER];
    long allocs = 0, frees = 0, failed_at = 0;
    uint64_t sum = 0;
    srand((unsigned)seed);
    for (long step = 0; step < loops; step++) {
        long idx = rand() % bufsize;
        struct slot *s = &buffer[idx];
        if (s->p) {
            if (!release(s))
                return 1;
            frees++;
        } else {
            int n = request();
            void *p = malloc((size_t)n);
            if (!p) {
                printf("memory allocation failed\n");
                failed_at = step + 1;
                break;
            }
            s->p = p;
            s->size = (size_t)n;
            s->tag = mix64((uint64_t)step);
            tag_write(p, s->size, s->tag);
            sum += (uint64_t)n;
            allocs++;
        }
    }

    printf("allocation count %ld\nfree count %ld\n", allocs, frees);
    printf("allocs %ld\nfrees %ld\nfailed_at %ld\n", allocs, frees, failed_at);
    struct fa_lab_stats st;
    if (lab_stats(&st)) {
        double avg = st.free_blocks ? (double)st.free_bytes / (double)st.free_blocks : 0.0;
        printf("freelist length %llu\ntotal free space %llu\naverage free block length %.1f\n",
               (unsigned long long)st.free_blocks, (unsigned long long)st.free_bytes, avg);
        printf("freelist_length %llu\nfree_space %llu\navg_free_block %.3f\n",
               (unsigned long long)st.free_blocks, (unsigned long long)st.free_bytes, avg);
        lab_print("", &st);
        lab_hist_print();
    }

    for (long i = 0; i < bufsize; i++)
        if (buffer[i].p && !release(&buffer[i]))
            return 1;
    if (failed_at)
        printf("ok id1206 -\n");
    else
        printf("ok id1206 %016llx\n", (unsigned long long)mix64(sum ^ ((uint64_t)allocs << 32)));
    return 0;
}

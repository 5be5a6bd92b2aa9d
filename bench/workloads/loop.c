/* loop: one block of one size allocated, written, read and freed, over and over (a temporary
 * buffer per iteration of a program's inner loop).
 *
 * Nothing else happens between a malloc and its free, so what is timed is how soon the
 * allocator's next malloc can start after its last free: the latency of its fast paths more
 * than their instruction count. The block's first and last 8 bytes hold a tag, checked before
 * the free. Pairs: smoke 30M, real (= full) 300M; a tenth of that for blocks above 256 KiB,
 * beyond most allocators' size classes: hardened ones (scudo, fitalloc's secure mode) make
 * system calls for each such pair, and would outlast the bench's timeout.
 * --threads T: T threads share the pairs, each its own loop at once: whatever the allocator
 * shares between threads on that path (a lock, a cache, a counter) is contended.
 *
 * usage: loop --size smoke|real|full [--block B (1..1048576, default 16)] [--threads T (1..64)]
 * prints: ok loop <checksum>
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/args.h"
#include "lib/pattern.h"
#include "lib/threads.h"

#define USAGE                                                                                      \
    "loop --size smoke|real|full [--block B (1..1048576, default 16)] [--threads T (1..64)]"
#define MAX_THREADS 64

static size_t n;
static long pairs_each;

static void *run(void *arg)
{
    uint64_t first = (uint64_t)(uintptr_t)arg * (uint64_t)pairs_each, sum = 0;
    for (long i = 0; i < pairs_each; i++) {
        uint64_t tag = (first + (uint64_t)i) * 0x9e3779b97f4a7c15ULL;
        unsigned char *p = malloc(n);
        if (!p) {
            fprintf(stderr, "loop: malloc(%zu) failed\n", n);
            exit(1);
        }
        tag_write(p, n, tag);
        if (!tag_ok(p, n, tag))
            corruption("tag", tag, n, 0);
        sum += p[0];
        free(p);
    }
    return (void *)(uintptr_t)sum;
}

int main(int argc, char **argv)
{
    static const char *const keys[] = {"--block", "--threads", NULL};
    int real = bench_parse(argc, argv, USAGE, keys) != BENCH_SMOKE;
    long block = bench_opt_long(argc, argv, "--block", 16, USAGE);
    long threads = bench_opt_long(argc, argv, "--threads", 1, USAGE);
    if (block < 1 || block > (1L << 20) || threads < 1 || threads > MAX_THREADS)
        bench_usage(USAGE);
    n = (size_t)block;
    long pairs = (real ? 300000000L : 30000000L) / (n > ((size_t)256 << 10) ? 10 : 1);
    pairs_each = pairs / threads;
    uint64_t sum = 0;
    if (threads == 1) {
        sum = (uint64_t)(uintptr_t)run(NULL);
    } else {
        sum = run_threads(threads, run, NULL, 0);
    }
    printf("ok loop %016llx\n", (unsigned long long)mix64(sum));
    return 0;
}

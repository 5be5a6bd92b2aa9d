/* pair: the instruction-count probe (not a timed workload).
 *
 *   pair <size> <iterations>             p = malloc(size); touch p; free(p)
 *   pair <size> <iterations> --baseline  the identical loop, calling trivial
 *                                        stand-ins instead of malloc/free
 *   pair <size> <iterations> --hold      (optional, with or without
 *                                        --baseline) first allocate one block
 *                                        of <size> and keep it live during
 *                                        the loop, so the loop's block never
 *                                        leaves its page/span empty
 *
 * Both modes run the same loop: the functions are called through volatile
 * function pointers (so nothing is inlined, and the real malloc/free calls
 * cannot be elided as a pair), every pointer is stored to a volatile, and a
 * byte of the block is written and read back. Subtracting the baseline's
 * instructions per iteration leaves the cost of one malloc+free pair.
 *
 * prints: ok pair <checksum>
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Alignas(64) unsigned char stand_in_block[64];

__attribute__((noinline)) static void *stand_in_malloc(size_t n)
{
    (void)n;
    __asm__ volatile("" ::: "memory");
    return stand_in_block;
}

__attribute__((noinline)) static void stand_in_free(void *p)
{
    __asm__ volatile("" : : "r"(p) : "memory");
}

void *volatile pair_sink;

int main(int argc, char **argv)
{
    int baseline = 0, hold = 0, bad = argc < 3;
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--baseline") == 0)
            baseline = 1;
        else if (strcmp(argv[i], "--hold") == 0)
            hold = 1;
        else
            bad = 1;
    }
    if (bad) {
        fprintf(stderr, "usage: pair <size> <iterations> [--baseline] [--hold]\n");
        return 2;
    }
    char *end;
    unsigned long long size = strtoull(argv[1], &end, 10);
    if (*end || size == 0) {
        fprintf(stderr, "pair: bad size '%s' (need >= 1)\n", argv[1]);
        return 2;
    }
    unsigned long long iters = strtoull(argv[2], &end, 10);
    if (*end || iters == 0) {
        fprintf(stderr, "pair: bad iteration count '%s'\n", argv[2]);
        return 2;
    }

    void *(*volatile do_malloc)(size_t) = baseline ? stand_in_malloc : malloc;
    void (*volatile do_free)(void *) = baseline ? stand_in_free : free;

    void *held = NULL;
    if (hold && !(held = malloc((size_t)size))) {
        fprintf(stderr, "pair: malloc(%llu) failed\n", size);
        return 1;
    }
    pair_sink = held;

    uint64_t sum = 0;
    for (unsigned long long i = 0; i < iters; i++) {
        volatile unsigned char *p = do_malloc((size_t)size);
        if (!p) {
            fprintf(stderr, "pair: malloc(%llu) failed\n", size);
            return 1;
        }
        pair_sink = (void *)p;
        p[0] = (unsigned char)i;
        sum += p[0];
        do_free((void *)p);
    }
    free(held);
    uint64_t expect = 0;
    for (unsigned long long i = 0; i < iters; i++)
        expect += (unsigned char)i;
    if (sum != expect) {
        fprintf(stderr, "pair: CORRUPTION: checksum %llu != %llu\n", (unsigned long long)sum,
                (unsigned long long)expect);
        return 1;
    }
    printf("ok pair %016llx\n", (unsigned long long)sum);
    return 0;
}

/* churn: single-thread random-size churn.
 *
 * A working set of 10,000 slots; each step picks a random slot, checks and
 * frees the block in it (if any) and puts a new block of a random size there.
 * Sizes are 16..1024 bytes, skewed small (each power-of-two band is half as
 * likely as the one below it). One allocation in 16 is a calloc whose zeroing
 * is verified. Every block carries a pattern derived from its tag, checked
 * before it is freed.
 *
 * usage: churn --size smoke|real|full   prints: ok churn <checksum>
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/args.h"
#include "lib/pattern.h"
#include "lib/slots.h"

#define USAGE "churn --size smoke|real|full"
#define SLOTS 10000

/* 16..1024, band [16,32] with p=1/2, (32,64] 1/4, ... (512,1024] 1/32 (+rest). */
static size_t rand_size(void)
{
    uint64_t r = rng();
    int band = __builtin_ctzll(r | (1ULL << 5)); /* 0..5 */
    size_t lo = band == 0 ? 16 : (size_t)16 << band;
    size_t hi = (size_t)32 << band;
    return lo + (size_t)((r >> 8) % (hi - lo + 1));
}

int main(int argc, char **argv)
{
    /* full: these shapes have no original size, so full = real */
    int real = bench_parse(argc, argv, USAGE, NULL) != BENCH_SMOKE;
    rng_seed(0x243f6a8885a308d3ULL);
    const uint64_t steps = real ? 60000000ULL : 6000000ULL;
    static struct slot s[SLOTS];
    uint64_t sum = 0, next_tag = 1;

    for (uint64_t i = 0; i < steps; i++) {
        uint64_t r = rng();
        struct slot *sl = &s[r % SLOTS];
        sum += slot_release(sl, block_check);
        size_t n = rand_size();
        unsigned char *p;
        if (((r >> 40) & 15) == 0) {
            p = slot_fill(sl, calloc(1, n), "calloc", n, 16, mix64(next_tag++));
            for (size_t k = 0; k < n; k++)
                if (p[k])
                    corruption("calloc not zeroed", 0, n, k);
        } else {
            p = slot_fill(sl, malloc(n), "malloc", n, 16, mix64(next_tag++));
        }
        block_fill(p, n, sl->tag);
    }
    sum += slots_release_all(s, SLOTS, block_check);
    printf("ok churn %016llx\n", (unsigned long long)sum);
    return 0;
}

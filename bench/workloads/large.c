/* large: large blocks.
 *
 * 4 slots hold live blocks of 64 KiB..16 MiB (log-uniform sizes, not page
 * multiples); each step frees the block in a random slot and allocates a new
 * one, writing a word into every page of it (so the pages are really
 * faulted in) and its last 8 bytes. Every page word is checked before free.
 * This measures how an allocator reuses (or returns and re-faults) big
 * regions.
 *
 * usage: large --size smoke|real|full   prints: ok large <checksum>
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/args.h"
#include "lib/pattern.h"
#include "lib/slots.h"

#define USAGE "large --size smoke|real|full"
#define LIVE 4
#define PAGE 4096
#define MIN_SIZE ((size_t)64 << 10)
#define MAX_SIZE ((size_t)16 << 20)

/* Roughly log-uniform in [MIN_SIZE, MAX_SIZE]: a random octave (64 KiB..8 MiB
 * doubling), then uniform inside it. */
static size_t rand_size(void)
{
    uint64_t r = rng();
    size_t lo = MIN_SIZE << (r % 8);
    return lo + (size_t)((r >> 8) % (lo + 1));
}

static void fill_block(unsigned char *p, size_t n, uint64_t tag)
{
    for (size_t off = 0; off + 8 <= n - 8; off += PAGE) {
        uint64_t v = tag ^ mix64(off);
        memcpy(p + off, &v, 8);
    }
    uint64_t v = ~tag;
    memcpy(p + n - 8, &v, 8);
}

static uint64_t check_block(const unsigned char *p, size_t n, uint64_t tag)
{
    uint64_t v;
    for (size_t off = 0; off + 8 <= n - 8; off += PAGE) {
        memcpy(&v, p + off, 8);
        if (v != (tag ^ mix64(off)))
            corruption("page word", tag, n, off);
    }
    memcpy(&v, p + n - 8, 8);
    if (v != ~tag)
        corruption("tail", tag, n, n - 8);
    return mix64(tag + n);
}

int main(int argc, char **argv)
{
    /* full: these shapes have no original size, so full = real */
    int real = bench_parse(argc, argv, USAGE, NULL) != BENCH_SMOKE;
    rng_seed(0xa4093822299f31d0ULL);
    uint64_t steps = real ? 15000 : 1500;
    struct slot s[LIVE] = {{0}};
    uint64_t sum = 0;

    for (uint64_t i = 0; i < steps; i++) {
        uint64_t r = rng();
        struct slot *sl = &s[r % LIVE];
        sum += slot_release(sl, check_block);
        size_t n = rand_size();
        unsigned char *p = slot_fill(sl, malloc(n), "malloc", n, 16, mix64(i + 1));
        fill_block(p, n, sl->tag);
    }
    sum += slots_release_all(s, LIVE, check_block);
    printf("ok large %016llx\n", (unsigned long long)sum);
    return 0;
}

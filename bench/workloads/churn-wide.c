/* churn-wide: single-thread random churn over a wide range of sizes.
 *
 * Like churn, but the sizes span 8 B..256 KiB, log-uniform (every octave as likely as the
 * next), so the blocks cross every size class and the boundary between small blocks and
 * large ones. A working set of 4,096 slots; each step picks a random slot, checks and frees
 * the block in it (if any) and puts a new block there.
 * What is written: the block's tag in its first bytes and ~tag in its last 8, and a word in
 * every 4 KiB page in between. WHY a word per page and not every byte: the program uses the
 * memory it gets, so an allocator that returns freed pages to the OS and faults them in again
 * pays for it, while the time stays in the allocator rather than in memset.
 * Steps: smoke 1M, real (= full) 10M.
 *
 * usage: churn-wide --size smoke|real|full   prints: ok churn-wide <checksum>
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/args.h"
#include "lib/pattern.h"
#include "lib/slots.h"

#define USAGE "churn-wide --size smoke|real|full"
#define SLOTS 4096
#define PAGE 4096
#define MIN_LOG 3  /* 8 B */
#define MAX_LOG 18 /* 256 KiB */

/* Log-uniform in [8, 256 KiB]: a random octave [2^k, 2^(k+1)), then uniform inside it. */
static size_t rand_size(uint64_t r)
{
    unsigned k = MIN_LOG + (unsigned)(r % (MAX_LOG - MIN_LOG));
    size_t lo = (size_t)1 << k;
    return lo + (size_t)((r >> 16) % (lo + 1));
}

/* The word of page `i` of the block tagged `tag`. */
static uint64_t page_word(uint64_t tag, size_t i)
{
    return mix64(tag ^ (i << 32));
}

static void fill(unsigned char *p, size_t n, uint64_t tag)
{
    tag_write(p, n, tag);
    for (size_t off = PAGE; off + 16 <= n; off += PAGE) {
        uint64_t v = page_word(tag, off / PAGE);
        memcpy(p + off, &v, 8);
    }
}

static uint64_t check(const unsigned char *p, size_t n, uint64_t tag)
{
    if (!tag_ok(p, n, tag))
        corruption("head or tail", tag, n, 0);
    for (size_t off = PAGE; off + 16 <= n; off += PAGE) {
        uint64_t v;
        memcpy(&v, p + off, 8);
        if (v != page_word(tag, off / PAGE))
            corruption("page word", tag, n, off);
    }
    return mix64(tag + n);
}

int main(int argc, char **argv)
{
    /* full: these shapes have no original size, so full = real */
    int real = bench_parse(argc, argv, USAGE, NULL) != BENCH_SMOKE;
    rng_seed(0x13198a2e03707344ULL);
    const uint64_t steps = real ? 10000000ULL : 1000000ULL;
    static struct slot s[SLOTS];
    uint64_t sum = 0;

    for (uint64_t i = 0; i < steps; i++) {
        uint64_t r = rng();
        struct slot *sl = &s[(r >> 48) % SLOTS];
        sum += slot_release(sl, check);
        size_t n = rand_size(r);
        /* 8 below 16 B: C allows a smaller block the smaller alignment (mimalloc uses it) */
        unsigned char *p = slot_fill(sl, malloc(n), "malloc", n, n < 16 ? 8 : 16, mix64(i + 1));
        fill(p, n, sl->tag);
    }
    sum += slots_release_all(s, SLOTS, check);
    printf("ok churn-wide %016llx\n", (unsigned long long)sum);
    return 0;
}

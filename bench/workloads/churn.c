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

#define USAGE "churn --size smoke|real|full"
#define SLOTS 10000

static uint64_t rng_state = 0x243f6a8885a308d3ULL;
static uint64_t rng(void)
{
    return mix64(rng_state++);
}

static void die(const char *what, uint64_t tag, size_t n, size_t off)
{
    fprintf(stderr, "churn: CORRUPTION: %s (tag %016llx, size %zu, offset %zu)\n", what,
            (unsigned long long)tag, n, off);
    exit(1);
}

/* Header (tag, size^mix(tag)) at offset 0, a word every 64 bytes from 16,
 * and the last 8 bytes. Words never overlap. */
static void fill_block(unsigned char *p, size_t n, uint64_t tag)
{
    uint64_t h[2] = {tag, n ^ mix64(tag)};
    memcpy(p, h, 16);
    for (size_t off = 16; off + 16 <= n; off += 64) {
        uint64_t v = mix64(tag + off);
        memcpy(p + off, &v, 8);
    }
    if (n >= 24) {
        uint64_t v = ~mix64(tag ^ n);
        memcpy(p + n - 8, &v, 8);
    }
}

static uint64_t check_block(const unsigned char *p, size_t n, uint64_t tag)
{
    uint64_t h[2];
    memcpy(h, p, 16);
    if (h[0] != tag || h[1] != (n ^ mix64(tag)))
        die("header", tag, n, 0);
    for (size_t off = 16; off + 16 <= n; off += 64) {
        uint64_t v;
        memcpy(&v, p + off, 8);
        if (v != mix64(tag + off))
            die("body", tag, n, off);
    }
    if (n >= 24) {
        uint64_t v;
        memcpy(&v, p + n - 8, 8);
        if (v != ~mix64(tag ^ n))
            die("tail", tag, n, n - 8);
    }
    return mix64(tag ^ (n << 1));
}

/* 16..1024, band [16,32] with p=1/2, (32,64] 1/4, ... (512,1024] 1/32 (+rest). */
static size_t rand_size(void)
{
    uint64_t r = rng();
    int band = __builtin_ctzll(r | (1ULL << 5)); /* 0..5 */
    size_t lo = band == 0 ? 16 : (size_t)16 << band;
    size_t hi = (size_t)32 << band;
    return lo + (size_t)((r >> 8) % (hi - lo + 1));
}

struct slot {
    unsigned char *p;
    size_t n;
    uint64_t tag;
};

int main(int argc, char **argv)
{
    /* full: these shapes have no original size, so full = real */
    int real = bench_parse(argc, argv, USAGE, NULL) != BENCH_SMOKE;
    const uint64_t steps = real ? 60000000ULL : 6000000ULL;
    static struct slot s[SLOTS];
    uint64_t sum = 0, next_tag = 1;

    for (uint64_t i = 0; i < steps; i++) {
        uint64_t r = rng();
        struct slot *sl = &s[r % SLOTS];
        if (sl->p) {
            sum += check_block(sl->p, sl->n, sl->tag);
            free(sl->p);
        }
        size_t n = rand_size();
        unsigned char *p;
        if (((r >> 40) & 15) == 0) {
            p = calloc(1, n);
            if (!p) {
                fprintf(stderr, "churn: calloc(%zu) failed\n", n);
                return 1;
            }
            for (size_t k = 0; k < n; k++)
                if (p[k])
                    die("calloc not zeroed", 0, n, k);
        } else {
            p = malloc(n);
            if (!p) {
                fprintf(stderr, "churn: malloc(%zu) failed\n", n);
                return 1;
            }
        }
        if ((uintptr_t)p & 15) {
            fprintf(stderr, "churn: %p not 16-byte aligned\n", (void *)p);
            return 1;
        }
        sl->p = p;
        sl->n = n;
        sl->tag = mix64(next_tag++);
        fill_block(p, n, sl->tag);
    }
    for (int i = 0; i < SLOTS; i++)
        if (s[i].p) {
            sum += check_block(s[i].p, s[i].n, s[i].tag);
            free(s[i].p);
        }
    printf("ok churn %016llx\n", (unsigned long long)sum);
    return 0;
}

/* realloc: buffers grown by repeated realloc.
 *
 * 8 buffers are live at a time; each step grows a random one by 16..4096
 * bytes with realloc, starting from 1 byte, until it reaches its target of
 * 1..8 MiB. Every byte written follows a pattern; after each realloc the
 * first byte, the last old byte and a random old byte are checked, and the
 * whole buffer is checked before it is freed and replaced by a new one.
 *
 * usage: realloc --size smoke|real|full   prints: ok realloc <checksum>
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/args.h"
#include "lib/pattern.h"

#define USAGE "realloc --size smoke|real|full"
#define LIVE 8
#define MIB ((size_t)1 << 20)

/* Byte i of buffer `id`. Varies along the buffer, so a copy to the wrong
 * offset or a lost page is caught. */
static inline unsigned char pat(uint32_t id, size_t i)
{
    return (unsigned char)((i * 131u) ^ (i >> 9) ^ (id * 77u));
}

static void die(uint32_t id, size_t sz, size_t i, unsigned char got)
{
    fprintf(stderr, "realloc: CORRUPTION: buffer %u (size %zu) byte %zu is %u, expected %u\n", id,
            sz, i, got, pat(id, i));
    exit(1);
}

struct buf {
    unsigned char *p;
    size_t sz, target;
    uint32_t id;
};

static void start(struct buf *b, uint32_t id)
{
    b->id = id;
    b->target = MIB + (size_t)(rng() % (7 * MIB + 1));
    b->sz = 1;
    b->p = malloc(1);
    if (!b->p) {
        fprintf(stderr, "realloc: malloc(1) failed\n");
        exit(1);
    }
    b->p[0] = pat(id, 0);
}

static uint64_t finish(struct buf *b)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < b->sz; i++) {
        if (b->p[i] != pat(b->id, i))
            die(b->id, b->sz, i, b->p[i]);
        sum += b->p[i];
    }
    free(b->p);
    b->p = NULL;
    return mix64(sum ^ ((uint64_t)b->sz << 20) ^ b->id);
}

int main(int argc, char **argv)
{
    /* full: these shapes have no original size, so full = real */
    int real = bench_parse(argc, argv, USAGE, NULL) != BENCH_SMOKE;
    rng_seed(0x13198a2e03707344ULL);
    uint32_t total = real ? 400 : 40; /* buffers grown to their target */
    struct buf b[LIVE];
    uint32_t started = 0, done = 0;
    uint64_t sum = 0, reallocs = 0;

    for (int i = 0; i < LIVE; i++)
        start(&b[i], started++);
    while (done < total) {
        uint64_t r = rng();
        struct buf *x = &b[r % LIVE];
        if (!x->p)
            continue; /* slot retired: no more buffers to start */
        size_t old = x->sz;
        size_t sz = old + 16 + (size_t)((r >> 20) % 4081);
        if (sz > x->target)
            sz = x->target;
        unsigned char *q = realloc(x->p, sz);
        if (!q) {
            fprintf(stderr, "realloc: realloc(%zu) failed\n", sz);
            return 1;
        }
        reallocs++;
        size_t k = (size_t)((r >> 40) % old);
        if (q[0] != pat(x->id, 0))
            die(x->id, sz, 0, q[0]);
        if (q[old - 1] != pat(x->id, old - 1))
            die(x->id, sz, old - 1, q[old - 1]);
        if (q[k] != pat(x->id, k))
            die(x->id, sz, k, q[k]);
        for (size_t i = old; i < sz; i++)
            q[i] = pat(x->id, i);
        x->p = q;
        x->sz = sz;
        if (sz == x->target) {
            sum += finish(x);
            done++;
            if (started < total)
                start(x, started++);
        }
    }
    for (int i = 0; i < LIVE; i++)
        if (b[i].p) {
            fprintf(stderr, "realloc: internal error: buffer left live\n");
            return 1;
        }
    printf("ok realloc %016llx\n", (unsigned long long)(sum ^ reallocs));
    return 0;
}

/* tree: allocation-heavy single-thread program (binary-trees style).
 *
 * A long-lived tree of depth 16 is built first. Then, for depths 4, 6, ...
 * 16, many short-lived trees are built, walked (every node's payload is
 * checked), and destroyed (each node checked again before its free). Nodes
 * are 32..64 bytes. Finally the long-lived tree is checked and destroyed.
 *
 * usage: tree --size smoke|real|full   prints: ok tree <checksum>
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/args.h"
#include "lib/pattern.h"

#define USAGE "tree --size smoke|real|full"
#define MAX_DEPTH 16

struct node {
    struct node *l, *r;
    uint64_t tag;
    uint32_t size; /* bytes allocated for this node: 32..64 */
    unsigned char payload[];
};

/* Payload: its first 4 bytes and the node's last 4 bytes carry tag-derived
 * values (the tail word is skipped when it would overlap the head word). */
static uint32_t head_word(const struct node *n)
{
    return (uint32_t)(n->tag >> 32) ^ 0x5a5a5a5au;
}
static uint32_t tail_word(const struct node *n)
{
    return (uint32_t)n->tag ^ n->size ^ 0xa5a5a5a5u;
}

static void fill_node(struct node *n)
{
    uint32_t h = head_word(n), t = tail_word(n);
    memcpy(n->payload, &h, 4);
    if (n->size >= 36)
        memcpy((unsigned char *)n + n->size - 4, &t, 4);
}

static uint64_t check_node(const struct node *n)
{
    uint32_t h, t;
    if (n->size < 32 || n->size > 64)
        goto bad;
    memcpy(&h, n->payload, 4);
    if (h != head_word(n))
        goto bad;
    if (n->size >= 36) {
        memcpy(&t, (const unsigned char *)n + n->size - 4, 4);
        if (t != tail_word(n))
            goto bad;
    }
    return mix64(n->tag ^ n->size);
bad:
    fprintf(stderr, "tree: CORRUPTION: node %p (tag %016llx, size %u)\n", (const void *)n,
            (unsigned long long)n->tag, n->size);
    exit(1);
}

static struct node *build(int depth)
{
    uint64_t r = rng();
    uint32_t size = 32 + (uint32_t)(r % 33);
    struct node *n = expect_block(malloc(size), "malloc", size, 16);
    n->tag = r;
    n->size = size;
    fill_node(n);
    if (depth > 0) {
        n->l = build(depth - 1);
        n->r = build(depth - 1);
    } else {
        n->l = n->r = NULL;
    }
    return n;
}

static uint64_t walk(const struct node *n)
{
    uint64_t s = check_node(n);
    if (n->l)
        s += walk(n->l) + walk(n->r);
    return s;
}

static uint64_t destroy(struct node *n)
{
    uint64_t s = 0;
    if (n->l)
        s += destroy(n->l) + destroy(n->r);
    s += check_node(n);
    free(n);
    return s;
}

int main(int argc, char **argv)
{
    /* full: these shapes have no original size, so full = real */
    int real = bench_parse(argc, argv, USAGE, NULL) != BENCH_SMOKE;
    rng_seed(0x082efa98ec4e6c89ULL);
    int passes = real ? 36 : 3;
    uint64_t sum = 0;

    struct node *long_lived = build(MAX_DEPTH);
    for (int pass = 0; pass < passes; pass++) {
        for (int d = 4; d <= MAX_DEPTH; d += 2) {
            int iters = 1 << (MAX_DEPTH - d + 2);
            for (int i = 0; i < iters; i++) {
                struct node *t = build(d);
                uint64_t w = walk(t);
                uint64_t x = destroy(t);
                if (w != x) {
                    fprintf(stderr, "tree: CORRUPTION: walk %016llx != destroy %016llx\n",
                            (unsigned long long)w, (unsigned long long)x);
                    return 1;
                }
                sum += x;
            }
        }
    }
    sum += walk(long_lived);
    sum += destroy(long_lived);
    printf("ok tree %016llx\n", (unsigned long long)sum);
    return 0;
}

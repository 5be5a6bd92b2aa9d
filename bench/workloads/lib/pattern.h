/* Tags written into blocks and checked before they are freed, so that a workload notices when
 * an allocator hands out overlapping or clobbered memory. (Needs _GNU_SOURCE, for
 * program_invocation_short_name.) */
#ifndef BENCH_PATTERN_H
#define BENCH_PATTERN_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The single-thread workloads' random numbers: a counter run through mix64, started by
 * rng_seed, so that a run makes the same calls every time. */
static uint64_t rng_state;

static inline void rng_seed(uint64_t seed)
{
    rng_state = seed;
}

static inline uint64_t rng(void)
{
    return mix64(rng_state++);
}

/* The first min(n, 8) bytes hold the tag; blocks of 16 bytes or more also end with ~tag. */
static inline void tag_write(void *p, size_t n, uint64_t tag)
{
    memcpy(p, &tag, n < 8 ? n : 8);
    if (n >= 16) {
        uint64_t end = ~tag;
        memcpy((char *)p + n - 8, &end, 8);
    }
}

/* 1 when the block still holds what tag_write put there. */
static inline int tag_ok(const void *p, size_t n, uint64_t tag)
{
    uint64_t got = 0, want = tag;
    size_t k = n < 8 ? n : 8;
    memcpy(&got, p, k);
    if (k < 8)
        want &= (1ULL << (8 * k)) - 1;
    if (got != want)
        return 0;
    if (n >= 16) {
        memcpy(&got, (const char *)p + n - 8, 8);
        return got == ~tag;
    }
    return 1;
}

/* A check failed: say where (the workload's name comes from argv[0]) and exit 1, which the
 * bench reports as FAILED. */
static inline void corruption(const char *what, uint64_t tag, size_t n, size_t off)
{
    fprintf(stderr, "%s: CORRUPTION: %s (tag %016llx, size %zu, offset %zu)\n",
            program_invocation_short_name, what, (unsigned long long)tag, n, off);
    exit(1);
}

/* malloc(n) with tag_write's tag in it; exit(1) with a message if malloc fails. */
static inline void *tagged_malloc(size_t n, uint64_t tag)
{
    void *p = malloc(n);
    if (!p) {
        fprintf(stderr, "%s: malloc(%zu) failed\n", program_invocation_short_name, n);
        exit(1);
    }
    tag_write(p, n, tag);
    return p;
}

/* exit(1) with a message unless the block still holds its tag. */
static inline void tagged_check(const void *p, size_t n, uint64_t tag)
{
    if (!tag_ok(p, n, tag)) {
        fprintf(stderr, "%s: CORRUPTION: block of %zu B at %p was overwritten\n",
                program_invocation_short_name, n, p);
        exit(1);
    }
}

static inline void tagged_free(void *p, size_t n, uint64_t tag)
{
    tagged_check(p, n, tag);
    free(p);
}

/* A denser pattern for the stress shapes: a header (tag, size ^ mix(tag)) at offset 0, a word
 * every 64 bytes from offset 16, and the last 8 bytes. The words never overlap. */
static inline void block_fill(unsigned char *p, size_t n, uint64_t tag)
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

/* Checks what block_fill wrote (exits through corruption() if anything changed); returns a
 * value for the workload's checksum. */
static inline uint64_t block_check(const unsigned char *p, size_t n, uint64_t tag)
{
    uint64_t h[2];
    memcpy(h, p, 16);
    if (h[0] != tag || h[1] != (n ^ mix64(tag)))
        corruption("header", tag, n, 0);
    for (size_t off = 16; off + 16 <= n; off += 64) {
        uint64_t v;
        memcpy(&v, p + off, 8);
        if (v != mix64(tag + off))
            corruption("body", tag, n, off);
    }
    if (n >= 24) {
        uint64_t v;
        memcpy(&v, p + n - 8, 8);
        if (v != ~mix64(tag ^ n))
            corruption("tail", tag, n, n - 8);
    }
    return mix64(tag ^ (n << 1));
}

/* p, the result of `call` for n bytes; exit(1) with a message if it is NULL or not aligned to
 * `align` (a power of two). */
static inline void *expect_block(void *p, const char *call, size_t n, uintptr_t align)
{
    if (!p) {
        fprintf(stderr, "%s: %s(%zu) failed\n", program_invocation_short_name, call, n);
        exit(1);
    }
    if ((uintptr_t)p & (align - 1)) {
        fprintf(stderr, "%s: %s(%zu) = %p is not %zu-byte aligned\n", program_invocation_short_name,
                call, n, p, (size_t)align);
        exit(1);
    }
    return p;
}

#endif

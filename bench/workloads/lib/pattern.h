/* Tags written into blocks and checked before they are freed, so that a workload notices when
 * an allocator hands out overlapping or clobbered memory. */
#ifndef BENCH_PATTERN_H
#define BENCH_PATTERN_H

#include <stdint.h>
#include <string.h>

static inline uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
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

#endif

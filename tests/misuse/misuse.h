/* Shared by misuse.c and misuse_cxx.cpp: the frame around each buggy case.
 *
 * A program runs one case: `misuse <case> <size>`. Around the bug it
 *   - allocates a few blocks of the case's size first and keeps them live (so the block is in a
 *     page that is not full and has neighbours),
 *   - writes "misuse: phase <name>" to stderr before each step (setup, bug, free, after), so
 *     the runner can tell where a crash happened,
 *   - after the bug, allocates, fills and frees a few blocks of the size ("after"), which is
 *     where a damaged free list shows, and checks that no two live blocks overlap.
 * Exit codes: 0 the program ran to its end (the bug was not caught), 3 reuse-after-free: the
 * freed block came back, 4 the case does not apply (n/a), 6 the program ran to its end but the
 * allocator handed out overlapping blocks, 7 stale-after-free: less than half of the freed
 * block's contents was left, 2 usage. Nothing else is printed to stdout.
 */
#ifndef FITALLOC_MISUSE_H
#define FITALLOC_MISUSE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
    MU_OK = 0,
    MU_USAGE = 2,
    MU_REUSED = 3,
    MU_NA = 4,
    MU_NOMEM = 5,
    MU_OVERLAP = 6,
    MU_CLEARED = 7
};

/* Hide a pointer's origin from the optimiser (and from gcc's use-after-free and
 * free-nonheap-object warnings). */
static inline void *mu_launder(void *p)
{
    __asm__ volatile("" : "+r"(p));
    return p;
}

static inline void mu_phase(const char *name)
{
    char line[64];
    int len = snprintf(line, sizeof line, "misuse: phase %s\n", name);
    if (len > 0 && write(2, line, (size_t)len) < 0)
        _exit(MU_USAGE);
}

/* The blocks the program holds, to notice the allocator handing out one twice. */
struct mu_live {
    char *p;
    size_t n;
};
static struct mu_live mu_blocks[64];
static int mu_overlap;

static inline void mu_track(void *p, size_t n)
{
    if (!p)
        return;
    char *c = (char *)p;
    for (size_t i = 0; i < sizeof mu_blocks / sizeof mu_blocks[0]; i++) {
        struct mu_live *b = &mu_blocks[i];
        if (b->p && c < b->p + b->n && b->p < c + n) {
            mu_overlap = 1;
            return; /* not tracked: freeing it later would be a second bug of ours */
        }
    }
    for (size_t i = 0; i < sizeof mu_blocks / sizeof mu_blocks[0]; i++) {
        if (!mu_blocks[i].p) {
            mu_blocks[i].p = c;
            mu_blocks[i].n = n;
            return;
        }
    }
}

static inline int mu_untrack(void *p)
{
    for (size_t i = 0; i < sizeof mu_blocks / sizeof mu_blocks[0]; i++) {
        if (mu_blocks[i].p == (char *)p) {
            mu_blocks[i].p = NULL;
            return 1;
        }
    }
    return 0;
}

/* Correct uses: allocate (tracked), free (untracked). noinline keeps each call a call. */
static __attribute__((noinline)) void *mu_alloc(size_t n)
{
    void *p = malloc(n);
    if (!p)
        _exit(MU_NOMEM);
    mu_track(p, n);
    return mu_launder(p);
}

static __attribute__((noinline)) void mu_free(void *p)
{
    if (mu_untrack(p))
        free(mu_launder(p));
}

/* Live neighbours allocated before the case's block. */
static inline void mu_setup(size_t n)
{
    mu_phase("setup");
    for (int i = 0; i < 3; i++)
        memset(mu_alloc(n), 0x22, n);
}

/* After the bug: a few blocks of the size, filled and freed, then everything still held. */
static inline int mu_after(size_t n, int rc)
{
    mu_phase("after");
    void *q[4];
    for (int i = 0; i < 4; i++) {
        q[i] = mu_alloc(n);
        memset(q[i], 0x33, n);
    }
    for (int i = 0; i < 4; i++)
        mu_free(q[i]);
    mu_phase("cleanup");
    for (size_t i = 0; i < sizeof mu_blocks / sizeof mu_blocks[0]; i++)
        if (mu_blocks[i].p)
            mu_free(mu_blocks[i].p);
    mu_phase("end");
    if (rc == MU_OK && mu_overlap)
        return MU_OVERLAP;
    return rc;
}

static inline int mu_size_arg(const char *s, size_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*s == 0 || *end != 0)
        return 0;
    *out = (size_t)v;
    return 1;
}

#endif

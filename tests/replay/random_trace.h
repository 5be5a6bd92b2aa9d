/* A random multi-threaded trace for the replay tests: every kind of operation (malloc, calloc,
 * realloc growing, shrinking, in place, from NULL and to 0 bytes, aligned, new/delete,
 * new[]/delete[]), addresses reused after their free, a few frees of pointers the trace never
 * returned, threads interleaved. Records are numbered in program order and written the way the
 * recorder writes them: per-thread buffers of BUFFER_RECORDS, each written when full.
 */
#ifndef FA_TESTS_REPLAY_RANDOM_TRACE_H
#define FA_TESTS_REPLAY_RANDOM_TRACE_H

#include "replay_test.h"

#define RANDOM_THREADS 4
#define BUFFER_RECORDS 64
#define MAX_LIVE 512

struct live_block {
    uint64_t addr, size;
    unsigned kind; /* 0 malloc/calloc/realloc/aligned, 1 new, 2 new[] */
};

/* The next address of the fake program: mostly fresh ones, sometimes one freed before. */
static inline uint64_t next_address(fa_rng *rng, uint64_t *fresh, uint64_t *freed, size_t *nfreed)
{
    if (*nfreed && fa_rng_below(rng, 3) == 0) {
        size_t i = fa_rng_below(rng, *nfreed);
        uint64_t a = freed[i];
        freed[i] = freed[--*nfreed];
        return a;
    }
    *fresh += 16 * (1 + fa_rng_below(rng, 64));
    return *fresh;
}

/* Build `ops` operations into tb (program order). live bytes at the end into *live_bytes. */
static inline void random_trace(struct trace_builder *tb, size_t ops, uint64_t seed,
                                uint64_t *live_bytes)
{
    fa_rng rng;
    fa_rng_seed(&rng, seed);
    struct live_block live[MAX_LIVE];
    size_t nlive = 0, nfreed = 0;
    uint64_t freed[MAX_LIVE * 4];
    uint64_t fresh = 0x7f0000000000ull;
    while (tb->count < ops) {
        unsigned choice = (unsigned)fa_rng_below(&rng, 100);
        bool must_alloc = nlive == 0, must_free = nlive == MAX_LIVE;
        struct fa_trace_record *r;
        if (must_free || (!must_alloc && choice < 40)) {
            size_t i = fa_rng_below(&rng, nlive);
            unsigned op = live[i].kind == 1   ? FA_TRACE_DELETE
                          : live[i].kind == 2 ? FA_TRACE_DELETE_ARRAY
                                              : FA_TRACE_FREE;
            r = tb_add(tb, op, 0, live[i].addr, 0);
            if (nfreed < MAX_LIVE * 4)
                freed[nfreed++] = live[i].addr;
            live[i] = live[--nlive];
        } else if (!must_alloc && choice < 55) {
            size_t i = fa_rng_below(&rng, nlive);
            uint64_t size = fa_rng_logsize(&rng, 1 << 16);
            unsigned how = (unsigned)fa_rng_below(&rng, 10);
            if (how == 0) { /* realloc(p, 0): a free */
                r = tb_add(tb, FA_TRACE_REALLOC, 0, live[i].addr, 0);
                if (nfreed < MAX_LIVE * 4)
                    freed[nfreed++] = live[i].addr;
                live[i] = live[--nlive];
            } else {
                uint64_t out = how < 4 ? live[i].addr : next_address(&rng, &fresh, freed, &nfreed);
                r = tb_add(tb, FA_TRACE_REALLOC, size, live[i].addr, out);
                if (out != live[i].addr && nfreed < MAX_LIVE * 4)
                    freed[nfreed++] = live[i].addr;
                live[i].addr = out;
                live[i].size = size;
                live[i].kind = 0;
            }
        } else if (!must_alloc && choice < 57) {
            r = tb_add(tb, FA_TRACE_FREE, 0, 0x10 + 16 * fa_rng_below(&rng, 1000), 0);
        } else {
            uint64_t size = fa_rng_logsize(&rng, choice < 59 ? 1 << 20 : 4096);
            uint64_t out = next_address(&rng, &fresh, freed, &nfreed);
            unsigned kind = 0, op = FA_TRACE_MALLOC;
            if (choice < 65) {
                op = FA_TRACE_CALLOC;
            } else if (choice < 70) {
                op = FA_TRACE_ALIGNED;
            } else if (choice < 75) {
                op = FA_TRACE_NEW, kind = 1;
            } else if (choice < 78) {
                op = FA_TRACE_NEW_ARRAY, kind = 2;
            } else if (choice < 80) {
                op = FA_TRACE_REALLOC; /* realloc(NULL, n) */
            }
            r = tb_add(tb, op, size, 0, out);
            if (op == FA_TRACE_ALIGNED)
                r->align_log2 = (uint8_t)(5 + fa_rng_below(&rng, 8));
            live[nlive++] = (struct live_block){out, size, kind};
        }
        r->thread = (uint32_t)fa_rng_below(&rng, RANDOM_THREADS);
    }
    *live_bytes = 0;
    for (size_t i = 0; i < nlive; i++)
        *live_bytes += live[i].size;
}

/* The file order of the records: per-thread buffers written as they fill, the rest at the end,
 * thread by thread. */
static inline size_t *buffer_order(const struct trace_builder *tb)
{
    size_t *order = malloc(tb->count * sizeof *order), n = 0;
    size_t pending[RANDOM_THREADS][BUFFER_RECORDS], fill[RANDOM_THREADS] = {0};
    CHECK(order != NULL);
    for (size_t i = 0; i < tb->count; i++) {
        uint32_t t = tb->records[i].thread;
        pending[t][fill[t]++] = i;
        if (fill[t] == BUFFER_RECORDS) {
            memcpy(order + n, pending[t], sizeof pending[t]);
            n += BUFFER_RECORDS;
            fill[t] = 0;
        }
    }
    for (unsigned t = 0; t < RANDOM_THREADS; t++) {
        memcpy(order + n, pending[t], fill[t] * sizeof(size_t));
        n += fill[t];
    }
    CHECK_EQ(n, tb->count);
    return order;
}

#endif

/* fitalloc-replay on a sequence worked out by hand, where first fit and best fit place two
 * blocks differently (block sizes: the request + 16-byte header, rounded up to 16):
 *
 *   op 0-3  a = 1000 (block 1024), s1 = 32 (48), b = 200 (224), s2 = 32 (48): heap 1344
 *   op 4-5  free a, free b: holes of 1024 (offset 0) and 224 (offset 1072), not neighbours
 *   op 6    c = 200 (224): first fit takes a's hole and splits it (224 + 800 free);
 *           best fit takes b's hole exactly
 *   op 7    d = 900 (928): first fit finds no hole of 928 (800 and 224) and grows the heap to
 *           2272; best fit takes a's hole and splits it (928 + 96 free)
 *   op 8-9  free(NULL): nothing; free of a pointer the trace never returned: unmatched
 *
 * End: first fit heap 2272, free blocks 800 + 224, 1 split; best fit heap 1344, one free block
 * of 96, 1 split. Worst fit behaves as first fit here, segregated fit
 * (blocks above its exact lists go to best fit) as best fit; the list index as the tree. So does
 * TLSF: c's 224 bytes have a list of their own size (below 256 bytes), b's hole; d's 928 start a
 * subrange, [928, 960), whose search goes on to a's 1024 in the next first level. */
#include "replay_test.h"

#define A 0x10000
#define S1 0x20000
#define B 0x30000
#define S2 0x40000
#define C 0x50000
#define D 0x60000

/* What a replay of the trace below reports under one policy (the rest is the same for all). */
struct expected {
    uint64_t heap;        /* peak and end heap: it never shrinks here */
    uint64_t free_blocks; /* at the end */
    double frag_free, frag_largest, frag_tolerance;
};
/* First, next and worst fit split a's hole for c and grow the heap for d (free: 800 + 224);
 * best and segregated fit take b's hole for c and split a's for d (free: 96). */
static const struct expected first_fit_like = {2272, 2, 1024.0 / 2272, 1 - 800.0 / 1024, 1e-5};
static const struct expected best_fit_like = {1344, 1, 96.0 / 1344, 0.0, 1e-9};

static void check_row(const char *csv, const char *config, const struct expected *e)
{
    CHECK_EQ(csv_u64(csv, config, "ops"), 10);
    CHECK_EQ(csv_u64(csv, config, "peak_heap"), e->heap);
    CHECK_EQ(csv_u64(csv, config, "end_heap"), e->heap);
    CHECK_EQ(csv_u64(csv, config, "peak_live"), 1264);
    CHECK_EQ(csv_u64(csv, config, "free_blocks_end"), e->free_blocks);
    CHECK_EQ(csv_u64(csv, config, "splits"), 1);
    CHECK_EQ(csv_u64(csv, config, "coalesces"), 0);
    CHECK_NEAR(csv_double(csv, config, "frag_free_end"), e->frag_free, 1e-5);
    CHECK_NEAR(csv_double(csv, config, "frag_largest_end"), e->frag_largest, e->frag_tolerance);
    CHECK_EQ(csv_u64(csv, config, "failed"), 0);
    CHECK_EQ(csv_u64(csv, config, "unmatched"), 1);
}

int main(void)
{
    struct trace_builder tb = {0};
    tb_malloc(&tb, 1000, A);
    tb_malloc(&tb, 32, S1);
    tb_malloc(&tb, 200, B);
    tb_malloc(&tb, 32, S2);
    tb_free(&tb, A);
    tb_free(&tb, B);
    tb_malloc(&tb, 200, C);
    tb_malloc(&tb, 900, D);
    tb_free(&tb, 0);
    tb_free(&tb, 0xdead0);
    write_trace("policies.fat", &tb);

    struct run_result r = run_replay("policies", "policies.fat", "--csv");
    CHECK_RUN(r, 0, "");
    check_row(r.out, "first", &first_fit_like);
    check_row(r.out, "next", &first_fit_like);
    check_row(r.out, "worst", &first_fit_like);
    check_row(r.out, "best", &best_fit_like);
    check_row(r.out, "segregated", &best_fit_like);
    check_row(r.out, "tlsf", &best_fit_like);
    /* Mean over the samples: one point after each of the 10 operations. The free-block count
     * of first fit, op by op: 0 0 0 0 1 2 2 2 2 2 -> 11 / 10; of best fit 0 0 0 0 1 2 1 1 1 1 -> 7 / 10. */
    CHECK_NEAR(csv_double(r.out, "first", "free_blocks_mean"), 1.1, 1e-9);
    CHECK_NEAR(csv_double(r.out, "best", "free_blocks_mean"), 0.7, 1e-9);
    run_result_release(&r);

    r = run_replay("policies-list", "policies.fat", "--csv", "--index", "list", "--policy",
                   "best,first");
    CHECK_RUN(r, 0, "");
    check_row(r.out, "first-list", &first_fit_like);
    check_row(r.out, "best-list", &best_fit_like);
    /* Only the policies asked for, in the order asked. */
    const char *best = strstr(r.out, "\nbest-list,"), *first = strstr(r.out, "\nfirst-list,");
    CHECK(best && first && best < first);
    CHECK(strstr(r.out, "\nnext") == NULL);
    run_result_release(&r);

    tb_release(&tb);
    return 0;
}

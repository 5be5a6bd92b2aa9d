/* libFuzzer target: the policy lab (FITALLOC_MODE=lab) through the public fa_* API (see
 * fuzz_ops.h for the input and the checks on every call). After every 8th op (every n/64 ops on a
 * heap of n > 512 blocks) and at the end of each input, fa_lab_check() proves the heap's invariants
 * (it aborts on a broken one) and the counters must agree with the live blocks: mallocs - frees
 * (plus direct mappings), used blocks, reuses <= mallocs, no coalescing when it is off, no
 * growth in a fixed arena. Single-threaded, FITALLOC_LOCK=global.
 *
 * Run it with the lab's options in the environment, as tests/fuzz/fuzz.cmake does (fitalloc reads
 * them when the program starts): FITALLOC_MODE=lab, FITALLOC_POLICY, FITALLOC_LAB_INDEX,
 * FITALLOC_LAB_COALESCE, FITALLOC_LAB_ARENA (then allocations may fail with ENOMEM).
 *
 *   FITALLOC_MODE=lab FITALLOC_POLICY=next build-fuzz/tests/fuzz/fuzz_lab -runs=8000 -seed=1 \
 *       /tmp/w tests/fuzz/corpus
 */
#include "fitalloc-lab.h"
#include "fuzz_ops.h"

static struct fuzz_state state;
static bool coalesce, arena;

static void check_lab(const struct fuzz_state *s)
{
    /* Both walk the whole heap and the index's every list (TLSF and the slab's have thousands,
     * empty or not): so even a small heap is walked only every 8th op; each input ends with a
     * walk, so a broken invariant is still caught by the input that broke it. */
    static uint64_t skip;
    if (skip && !s->end) {
        skip--;
        return;
    }
    struct fa_lab_stats st = fuzz_checked_lab_stats(s);
    uint64_t heap_live = st.mallocs - st.frees;
    if (st.frees > st.mallocs || heap_live + st.direct_allocs - st.direct_frees != s->live ||
        st.blocks - st.free_blocks != heap_live || st.reuses > st.mallocs ||
        st.largest_free > st.free_bytes || (!coalesce && st.coalesces) || (arena && st.grows) ||
        st.heaps > 1)
        fuzz_fail(s,
                  "lab statistics: mallocs %llu frees %llu direct %llu-%llu blocks %llu free "
                  "blocks %llu reuses %llu coalesces %llu grows %llu largest free %llu free "
                  "bytes %llu heaps %llu; live blocks %zu",
                  (unsigned long long)st.mallocs, (unsigned long long)st.frees,
                  (unsigned long long)st.direct_allocs, (unsigned long long)st.direct_frees,
                  (unsigned long long)st.blocks, (unsigned long long)st.free_blocks,
                  (unsigned long long)st.reuses, (unsigned long long)st.coalesces,
                  (unsigned long long)st.grows, (unsigned long long)st.largest_free,
                  (unsigned long long)st.free_bytes, (unsigned long long)st.heaps, s->live);
    skip = (st.blocks + 512) / 64;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (fa_option_get("mode") != 1 || fa_option_get("lock") != 0) {
        fprintf(stderr, "fuzz_lab: run with FITALLOC_MODE=lab (and FITALLOC_LOCK=global)\n");
        exit(1);
    }
    coalesce = fa_option_get("lab_coalesce") != 0;
    arena = fa_option_get("lab_arena") != 0;
    state.oom_ok = arena;
    static const char *const policies[] = {"first",      "next", "best",  "worst",
                                           "segregated", "tlsf", "buddy", "slab"};
    fprintf(stderr, "fuzz_lab: policy %s, index %s, coalescing %s, arena %lld bytes\n",
            policies[fa_option_get("policy") % 8], fa_option_get("lab_index") ? "list" : "tree",
            coalesce ? "on" : "off", fa_option_get("lab_arena"));
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_run(&state, data, size, check_lab);
    return 0;
}

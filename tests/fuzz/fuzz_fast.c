/* libFuzzer target: the fast engine through the public fa_* API (see fuzz_ops.h for the input
 * and the checks on every call). The statistics must count exactly the live blocks: allocs -
 * frees and bytes in use (block sizes) from fa_stats_get, checked after every 16th op and at the
 * end of each input (nothing live). Single-threaded.
 *
 *   mkdir -p /tmp/w && build-fuzz/tests/fuzz/fuzz_fast -runs=20000 -seed=1 /tmp/w tests/fuzz/corpus
 *   build-fuzz/tests/fuzz/fuzz_fast CRASH-FILE        (run one input again)
 */
#include "fuzz_ops.h"

static struct fuzz_state state = {.fast = true};

static void check_stats(const struct fuzz_state *s)
{
    if (s->op % 16 && !s->end) /* a walk over every page: every 16th op, and at the end */
        return;
    struct fa_stats st;
    st.size = sizeof st;
    if (fa_stats_get(&st) != 0)
        fuzz_fail(s, "fa_stats_get failed");
    if (st.allocs - st.frees != s->live || st.bytes_in_use != s->live_size)
        fuzz_fail(s,
                  "statistics: %llu allocs - %llu frees, %llu bytes in use; live: %zu blocks, "
                  "%zu bytes",
                  (unsigned long long)st.allocs, (unsigned long long)st.frees,
                  (unsigned long long)st.bytes_in_use, s->live, s->live_size);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (fa_option_get("mode") != 0) {
        fprintf(stderr, "fuzz_fast: FITALLOC_MODE is not fast (fuzz_lab tests the lab)\n");
        exit(1);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_run(&state, data, size, check_stats);
    return 0;
}

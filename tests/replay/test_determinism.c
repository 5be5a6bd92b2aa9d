/* fitalloc-replay is deterministic: two runs on the same trace, a run on the same records
 * written in another file order (the recorder writes per-thread buffers; program order comes
 * from seq) and a run with FITALLOC_* options in the environment print the same rows — every
 * field but the timings (mean_ns, p99_ns) — under every policy and for the engine. The samples
 * change the means, never the end of the replay. */
#include "random_trace.h"

#define OPS (FA_TEST_SANITIZED ? 8000 : 20000)
/* Columns of the CSV output that are timings (0-based). */
#define MEAN_NS_COLUMN 13
#define P99_NS_COLUMN 14

/* The CSV text without its timing columns. */
static char *without_timings(const char *csv)
{
    char *out = malloc(strlen(csv) + 1), *o = out;
    CHECK(out != NULL);
    int column = 0;
    for (const char *p = csv; *p; p++) {
        bool timing = column == MEAN_NS_COLUMN || column == P99_NS_COLUMN;
        if (*p == ',')
            column++;
        else if (*p == '\n')
            column = 0;
        if (!timing)
            *o++ = *p;
    }
    *o = 0;
    return out;
}

static char *replay_rows(const char *tag, const char *path)
{
    struct run_result r = run_replay(tag, (char *)path, "--csv", "--engine");
    CHECK_RUN(r, 0, "");
    char *rows = without_timings(r.out);
    run_result_release(&r);
    return rows;
}

int main(void)
{
    struct trace_builder tb = {0};
    uint64_t live_bytes;
    random_trace(&tb, OPS, 12345, &live_bytes);
    write_trace("determinism-seq.fat", &tb);
    size_t *order = buffer_order(&tb);
    struct fa_trace_header h = trace_header();
    write_trace_as("determinism-buffers.fat", &h, tb.records, tb.count, order, 0);

    char *first = replay_rows("determinism-1", "determinism-buffers.fat");
    char *second = replay_rows("determinism-2", "determinism-buffers.fat");
    char *in_seq = replay_rows("determinism-3", "determinism-seq.fat");
    CHECK_MSG(strcmp(first, second) == 0, "two runs differ:\n%s\n%s", first, second);
    CHECK_MSG(strcmp(first, in_seq) == 0, "file order changed the rows:\n%s\n%s", first, in_seq);
    /* The caller's FITALLOC_* options do not reach the engine row: not the lab, not secure
     * mode, not a purge delay that would make it depend on the clock. */
    setenv("FITALLOC_MODE", "lab", 1);
    setenv("FITALLOC_SECURE", "1", 1);
    setenv("FITALLOC_PURGE_DELAY", "0", 1);
    char *with_options = replay_rows("determinism-5", "determinism-buffers.fat");
    unsetenv("FITALLOC_MODE");
    unsetenv("FITALLOC_SECURE");
    unsetenv("FITALLOC_PURGE_DELAY");
    CHECK_MSG(strcmp(first, with_options) == 0, "FITALLOC_* options changed the rows:\n%s\n%s",
              first, with_options);

    /* Six rows, the replay really happened, and the engine row has its empty fields. */
    CHECK_EQ(csv_u64(first, "first", "ops"), OPS);
    CHECK_EQ(csv_u64(first, "engine", "ops"), OPS);
    const char *configs[] = {"first", "next", "best", "worst", "segregated", "engine"};
    for (size_t i = 0; i < 6; i++) {
        CHECK_GT(csv_u64(first, configs[i], "peak_heap"), 0);
        CHECK_GE(csv_u64(first, configs[i], "peak_live"), live_bytes);
        CHECK_EQ(csv_u64(first, configs[i], "failed"), 0);
        /* The random trace frees 2 % of its operations on pointers it never returned. */
        CHECK_GT(csv_u64(first, configs[i], "unmatched"), 0);
    }
    char value[64];
    CHECK(csv_field(first, "engine", "splits", value) && value[0] == 0);
    CHECK_GT(csv_u64(first, "best", "splits"), 0);
    CHECK_GT(csv_u64(first, "best", "coalesces"), 0);

    /* Fewer samples: other means, the same end. */
    struct run_result r = run_replay("determinism-4", "determinism-buffers.fat", "--csv",
                                     "--samples", "7", "--policy", "first");
    CHECK_RUN(r, 0, "");
    CHECK_EQ(csv_u64(r.out, "first", "end_heap"), csv_u64(first, "first", "end_heap"));
    CHECK_EQ(csv_u64(r.out, "first", "free_blocks_end"),
             csv_u64(first, "first", "free_blocks_end"));
    CHECK_EQ(csv_u64(r.out, "first", "splits"), csv_u64(first, "first", "splits"));
    run_result_release(&r);

    free(first);
    free(second);
    free(in_seq);
    free(with_options);
    free(order);
    tb_release(&tb);
    return 0;
}

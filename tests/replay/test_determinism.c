/* fitalloc-replay is deterministic: two runs on the same trace, a run on the same records
 * written in another file order (the recorder writes per-thread buffers; program order comes
 * from the times) and a run with FITALLOC_* options in the environment print the same rows —
 * every field but the timings (mean_ns, p99_ns) — under every policy, and for the engine all
 * but its memory figures (heap and free bytes are the engine's committed memory, which may
 * differ by an OS page from run to run: it depends on where the OS places mappings; with
 * address-space randomisation off it repeats exactly). The samples change the means, never the
 * end of the replay. */
#include "random_trace.h"

#define OPS (FA_TEST_SANITIZED ? 8000 : 20000)
/* Columns of the CSV output that are timings (0-based), and the engine row's memory figures. */
#define MEAN_NS_COLUMN 13
#define P99_NS_COLUMN 14
#define ENGINE_MEMORY_COLUMNS(c) ((c) == 2 || (c) == 3 || (c) == 5 || (c) == 6)

/* The CSV text without its timing columns (timings), or with the engine row's memory figures
 * empty (engine_memory). */
static char *strip(const char *csv, bool timings, bool engine_memory)
{
    char *out = malloc(strlen(csv) + 1), *o = out;
    CHECK(out != NULL);
    int column = 0;
    bool engine = engine_memory && strncmp(csv, "engine,", 7) == 0;
    for (const char *p = csv; *p; p++) {
        bool timing = timings && (column == MEAN_NS_COLUMN || column == P99_NS_COLUMN);
        /* The engine's memory figures are emptied, their commas kept (the checks below read
         * its other fields by column). */
        bool dropped = timing || (engine && ENGINE_MEMORY_COLUMNS(column) && *p != ',');
        if (*p == ',') {
            column++;
        } else if (*p == '\n') {
            column = 0;
            engine = engine_memory && strncmp(p + 1, "engine,", 7) == 0;
        }
        if (!dropped)
            *o++ = *p;
    }
    *o = 0;
    return out;
}

static char *replay_rows(const char *tag, const char *path)
{
    struct run_result r = run_replay(tag, (char *)path, "--csv", "--engine");
    CHECK_RUN(r, 0, "");
    char *rows = strip(r.out, true, false);
    run_result_release(&r);
    return rows;
}

/* Rows a and b (timings removed) are the same, the engine's memory figures aside. */
static bool same_rows(const char *a, const char *b)
{
    char *x = strip(a, false, true), *y = strip(b, false, true);
    bool same = strcmp(x, y) == 0;
    free(x);
    free(y);
    return same;
}

int main(void)
{
    struct trace_builder tb = {0};
    uint64_t live_bytes;
    random_trace(&tb, OPS, 12345, &live_bytes);
    write_trace("determinism-seq.fat", &tb);
    size_t *order = buffer_order(&tb);
    struct fa_trace_header h = trace_header();
    write_trace_as("determinism-buffers.fat", &h, tb.records, tb.count, order, NULL);

    char *first = replay_rows("determinism-1", "determinism-buffers.fat");
    char *second = replay_rows("determinism-2", "determinism-buffers.fat");
    char *in_seq = replay_rows("determinism-3", "determinism-seq.fat");
    CHECK_MSG(same_rows(first, second), "two runs differ:\n%s\n%s", first, second);
    CHECK_MSG(same_rows(first, in_seq), "file order changed the rows:\n%s\n%s", first, in_seq);
    /* The caller's FITALLOC_* options do not reach the engine row: not the lab, not secure
     * mode, not a purge delay that would make it depend on the clock. */
    setenv("FITALLOC_MODE", "lab", 1);
    setenv("FITALLOC_SECURE", "1", 1);
    setenv("FITALLOC_PURGE_DELAY", "0", 1);
    char *with_options = replay_rows("determinism-5", "determinism-buffers.fat");
    unsetenv("FITALLOC_MODE");
    unsetenv("FITALLOC_SECURE");
    unsetenv("FITALLOC_PURGE_DELAY");
    CHECK_MSG(same_rows(first, with_options), "FITALLOC_* options changed the rows:\n%s\n%s", first,
              with_options);

    /* Nine rows, the replay really happened, and the engine row has its empty fields. */
    CHECK_EQ(csv_u64(first, "first", "ops"), OPS);
    CHECK_EQ(csv_u64(first, "engine", "ops"), OPS);
    const char *configs[] = {"first", "next",  "best", "worst", "segregated",
                             "tlsf",  "buddy", "slab", "engine"};
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
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

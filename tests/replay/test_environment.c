/* The caller's FITALLOC_* options do not reach the library inside fitalloc-replay: with
 * FITALLOC_TRACE naming the very trace being replayed (left exported after recording it), the
 * trace is not truncated at start, and FITALLOC_STATS prints no report. (The engine row's
 * independence from FITALLOC_MODE, FITALLOC_SECURE and the purge delay: test_determinism.c.) */
#include <sys/stat.h>

#include "replay_test.h"

#define OPS 100

static long long file_size(const char *path)
{
    struct stat st;
    CHECK(stat(path, &st) == 0);
    return (long long)st.st_size;
}

int main(void)
{
    struct trace_builder tb = {0};
    for (uint64_t i = 0; i < OPS / 2; i++)
        tb_malloc(&tb, 100, 0x1000 * (i + 1));
    for (uint64_t i = 0; i < OPS / 2; i++)
        tb_free(&tb, 0x1000 * (i + 1));
    struct fa_trace_header h = trace_header();
    struct trace_layout layout;
    write_trace_as("environment.fat", &h, tb.records, tb.count, NULL, &layout);
    long long size = file_size("environment.fat");
    CHECK_EQ(size, layout.size);

    setenv("FITALLOC_TRACE", "environment.fat", 1);
    setenv("FITALLOC_STATS", "1", 1);
    const char *modes[][4] = {{"--policy", "best", "--csv", NULL},
                              {"--policy", "best", "--csv", "--engine"}};
    for (size_t i = 0; i < 2; i++) {
        struct run_result r =
            run_replay_argv("environment", (char *const[]){"environment.fat", (char *)modes[i][0],
                                                           (char *)modes[i][1], (char *)modes[i][2],
                                                           (char *)modes[i][3], NULL});
        CHECK_RUN(r, 0, "");
        CHECK_EQ(file_size("environment.fat"), size);
        CHECK_EQ(csv_u64(r.out, "best", "ops"), OPS);
        CHECK_EQ(csv_u64(r.out, "best", "peak_live"), OPS / 2 * 100);
        CHECK_MSG(r.err[0] == 0, "stderr: %s", r.err);
        run_result_release(&r);
    }
    unsetenv("FITALLOC_TRACE");
    unsetenv("FITALLOC_STATS");
    tb_release(&tb);
    return 0;
}

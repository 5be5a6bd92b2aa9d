/* Usage errors exit 2 with a message on stderr and nothing on stdout; --help exits 0. */
#include "replay_test.h"

static void expect_usage_error(const char *tag, char *const *args, const char *message)
{
    struct run_result r = run_replay_argv(tag, args);
    CHECK_RUN(r, 2, message);
    CHECK_EQ(strlen(r.out), 0);
    run_result_release(&r);
}

#define USAGE_ERROR(message, ...)                                                                  \
    expect_usage_error("usage", (char *const[]){__VA_ARGS__, NULL}, message)

int main(void)
{
    struct trace_builder tb = {0};
    tb_malloc(&tb, 10, 0x100);
    write_trace("usage.fat", &tb);

    expect_usage_error("usage", (char *const[]){NULL}, "no trace file given");
    USAGE_ERROR("unknown option --frobnicate", "usage.fat", "--frobnicate");
    USAGE_ERROR("\"fastest\" is not one of", "usage.fat", "--policy", "fastest");
    USAGE_ERROR("\"\" is not one of", "usage.fat", "--policy", "first,");
    USAGE_ERROR("--policy needs a value", "usage.fat", "--policy");
    USAGE_ERROR("--index: \"hash\" is not tree or list", "usage.fat", "--index", "hash");
    USAGE_ERROR("--samples: \"0\" is not a number", "usage.fat", "--samples", "0");
    USAGE_ERROR("--samples: \"ten\" is not a number", "usage.fat", "--samples=ten");
    USAGE_ERROR("--samples: \"-5\" is not a number", "usage.fat", "--samples", "-5");
    USAGE_ERROR("one trace at a time", "usage.fat", "other.fat");
    USAGE_ERROR("--json and --csv exclude each other", "usage.fat", "--csv", "--json");
    USAGE_ERROR("--map-out needs a directory", "usage.fat", "--map-out=");

    struct run_result r = run_replay("usage-help", "--help");
    CHECK_RUN(r, 0, "");
    CHECK(strncmp(r.out, "usage: fitalloc-replay TRACE", 28) == 0);
    run_result_release(&r);
    /* The "=" form works like the separate one. */
    r = run_replay("usage-eq", "usage.fat", "--policy=worst", "--samples=3", "--csv");
    CHECK_RUN(r, 0, "");
    CHECK_EQ(csv_u64(r.out, "worst", "ops"), 1);
    run_result_release(&r);
    tb_release(&tb);
    return 0;
}

/* fitalloc-replay: replay a trace (include/fitalloc-trace.h) through a lab heap per policy and
 * through the fast engine, and print one row per configuration (docs/replay.md).
 *
 * Each configuration replays the whole trace on a heap of its own, one after the other, from
 * this one thread; the rows depend on the trace only (the timings aside).
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "dump.h"
#include "engine_pages.h"
#include "replay_env.h"
#include "map_out.h"
#include "common/options.h"
#include "output.h"
#include "replay.h"

enum { EXIT_DONE = 0, EXIT_FAILED = 1, EXIT_USAGE = 2, EXIT_UNREADABLE = 3 };

#define MAX_ROWS (REPLAY_POLICIES + 1)

struct session {
    const struct replay_cli *cli;
    const struct trace *trace;
    struct replay_row rows[MAX_ROWS];
    size_t row_count;
    uint64_t reused_live;
};

/* keep_map: blocks and series (a lab heap); series: the series alone (the engine). */
static bool replay_with(struct session *s, struct replay_backend *b, bool keep_map, bool series)
{
    struct replay_options opt = {.samples = s->cli->samples, .keep_map = keep_map};
    struct replay_result result;
    bool ok = replay_run(s->trace, b, &opt, &s->rows[s->row_count], &result);
    if (ok) {
        s->row_count++;
        /* The same in every configuration (it comes from the trace): keep one count. */
        if (result.reused_live > s->reused_live)
            s->reused_live = result.reused_live;
        if (keep_map)
            ok = map_out_write(s->cli->map_out, b->name, &result);
        else if (series)
            ok = map_out_write_series(s->cli->map_out, b->name, &result);
    }
    replay_result_release(&result);
    return ok;
}

static bool replay_lab(struct session *s, int policy)
{
    char config[32];
    snprintf(config, sizeof config, "%s%s", replay_policy_names[policy],
             s->cli->index == FA_LAB_INDEX_LIST ? "-list" : "");
    struct replay_backend b;
    if (!replay_lab_open(&b, config, policy, s->cli->index))
        return false;
    bool ok = replay_with(s, &b, s->cli->map_out != NULL, false);
    replay_lab_close(&b);
    return ok;
}

static bool replay_engine(struct session *s)
{
    const char *map_out = s->cli->map_out;
    struct replay_backend b;
    if (!replay_engine_open(&b, s->cli->mesh, map_out != NULL))
        return false;
    bool ok = replay_with(s, &b, false, map_out != NULL);
    if (ok && map_out)
        ok = engine_pages_write(map_out, b.name, replay_engine_pages(&b));
    replay_engine_close(&b);
    return ok;
}

int main(int argc, char **argv)
{
    struct replay_cli cli;
    if (cli_parse(argc, argv, &cli) != 0)
        return EXIT_USAGE;
    if (cli.help) {
        cli_usage(stdout);
        return EXIT_DONE;
    }
    if (cli.engine && !cli.dump)
        replay_env_for_engine(argc, argv);

    struct trace t;
    if (trace_read(cli.trace, &t) != 0)
        return EXIT_UNREADABLE;
    /* Output can be millions of lines (--dump): a large buffer. */
    static char out_buffer[1 << 16];
    setvbuf(stdout, out_buffer, _IOFBF, sizeof out_buffer);
    if (cli.dump) {
        dump_records(stdout, &t);
        trace_release(&t);
        return fflush(stdout) == 0 ? EXIT_DONE : EXIT_FAILED;
    }
    if (t.lost)
        fprintf(stderr,
                "fitalloc-replay: %s: note: %llu operations missing from the trace (gaps in "
                "the threads' record numbers: buffers that were never written)\n",
                cli.trace, (unsigned long long)t.lost);
    if (cli.map_out && !map_out_prepare(cli.map_out)) {
        trace_release(&t);
        return EXIT_FAILED;
    }

    struct session s = {.cli = &cli, .trace = &t};
    bool ok = true;
    for (size_t i = 0; ok && i < cli.policy_count; i++)
        ok = replay_lab(&s, cli.policies[i]);
    if (ok && cli.engine)
        ok = replay_engine(&s);
    if (s.reused_live)
        fprintf(stderr,
                "fitalloc-replay: %s: note: %llu pointers were returned again while still live "
                "(their free was lost): freed before reuse\n",
                cli.trace, (unsigned long long)s.reused_live);
    if (ok)
        output_rows(stdout, cli.format, &t, s.rows, s.row_count);
    trace_release(&t);
    if (fflush(stdout) != 0) {
        fprintf(stderr, "fitalloc-replay: error writing the output\n");
        return EXIT_FAILED;
    }
    return ok ? EXIT_DONE : EXIT_FAILED;
}

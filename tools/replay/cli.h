/* The command line of fitalloc-replay (docs/replay.md). */
#ifndef FA_REPLAY_CLI_H
#define FA_REPLAY_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define REPLAY_POLICIES 8

enum replay_format { FORMAT_TABLE, FORMAT_JSON, FORMAT_CSV };

struct replay_cli {
    const char *trace;
    int policies[REPLAY_POLICIES]; /* enum fa_policy values, in the order asked */
    size_t policy_count;
    int index;                     /* enum fa_lab_index */
    bool engine, mesh, dump, help; /* mesh: the engine with meshing (implies engine) */
    enum replay_format format;
    const char *map_out;
    size_t samples;
};

/* The policy names, indexed by enum fa_policy. */
extern const char *const replay_policy_names[REPLAY_POLICIES];

/* Parse argv. 0: done; 2: a usage error (message printed to stderr). */
int cli_parse(int argc, char **argv, struct replay_cli *cli);
void cli_usage(FILE *out);

#endif

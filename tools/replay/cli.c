/* Parsing the command line (cli.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common/options.h"

/* The order of enum fa_policy (src/common/options.h). */
const char *const replay_policy_names[REPLAY_POLICIES] = {"first",      "next", "best",  "worst",
                                                          "segregated", "tlsf", "buddy", "slab"};

#define MAX_SAMPLES 100000000

void cli_usage(FILE *out)
{
    fputs("usage: fitalloc-replay TRACE [options]\n"
          "Replays a FITALLOC_TRACE file, in program order and from one thread, through a lab\n"
          "heap per policy (and the fast engine), and prints one row per configuration.\n"
          "  --policy LIST     \"all\" (default) or a comma list of first,next,best,worst,"
          "segregated,tlsf,buddy,slab; \"none\" with --engine: the engine alone\n"
          "  --index tree|list the lab's free-block index (default tree; tlsf, buddy, slab keep "
          "their "
          "own)\n"
          "  --engine          also replay through the fast engine (a row named \"engine\")\n"
          "  --mesh            the engine with meshing (FITALLOC_MESH=1), a mesh pass at every\n"
          "                    sample point (a row named \"engine-mesh\"; implies --engine)\n"
          "  --json | --csv    output format (default: an aligned text table)\n"
          "  --map-out DIR     also write DIR/<config>.blocks.csv and DIR/<config>.series.csv\n"
          "  --samples N       points in the series and in the means (default 1000)\n"
          "  --dump            print the trace's records in program order and exit\n"
          "  -h, --help        this help\n"
          "exit status: 0 done, 1 a replay or output failed, 2 usage error, 3 the trace cannot "
          "be read\n",
          out);
}

__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fitalloc-replay: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\n(fitalloc-replay --help for the options)\n", stderr);
    va_end(ap);
    return 2;
}

static int parse_policies(const char *list, struct replay_cli *cli)
{
    cli->policy_count = 0;
    if (strcmp(list, "none") == 0)
        return 0; /* the engine alone */
    if (strcmp(list, "all") == 0) {
        for (int p = 0; p < REPLAY_POLICIES; p++)
            cli->policies[cli->policy_count++] = p;
        return 0;
    }
    const char *s = list;
    for (;;) {
        size_t len = strcspn(s, ",");
        int found = -1;
        for (int p = 0; p < REPLAY_POLICIES; p++)
            if (strlen(replay_policy_names[p]) == len && !strncmp(s, replay_policy_names[p], len))
                found = p;
        if (found < 0)
            return usage_error("--policy: \"%.*s\" is not one of all, first, next, best, worst, "
                               "segregated, tlsf, buddy, slab",
                               (int)len, s);
        bool seen = false;
        for (size_t i = 0; i < cli->policy_count; i++)
            seen |= cli->policies[i] == found;
        if (!seen)
            cli->policies[cli->policy_count++] = found;
        if (!s[len])
            return 0;
        s += len + 1;
    }
}

static int parse_samples(const char *text, struct replay_cli *cli)
{
    char *end;
    errno = 0;
    unsigned long long n = strtoull(text, &end, 10);
    if (errno || end == text || *end || text[0] == '-' || n < 1 || n > MAX_SAMPLES)
        return usage_error("--samples: \"%s\" is not a number from 1 to %d", text, MAX_SAMPLES);
    cli->samples = (size_t)n;
    return 0;
}

/* The value of an option given as "--name VALUE" or "--name=VALUE"; NULL if missing. */
static const char *option_value(int argc, char **argv, int *i, const char *arg, size_t name_len)
{
    if (arg[name_len] == '=')
        return arg + name_len + 1;
    if (*i + 1 < argc)
        return argv[++*i];
    return NULL;
}

static bool is_option(const char *arg, const char *name)
{
    size_t len = strlen(name);
    return strncmp(arg, name, len) == 0 && (arg[len] == 0 || arg[len] == '=');
}

int cli_parse(int argc, char **argv, struct replay_cli *cli)
{
    memset(cli, 0, sizeof *cli);
    cli->samples = 1000;
    cli->index = FA_LAB_INDEX_TREE;
    parse_policies("all", cli);
    bool json = false, csv = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        int rc = 0;
        if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
            cli->help = true;
        } else if (is_option(arg, "--policy") || is_option(arg, "--index") ||
                   is_option(arg, "--map-out") || is_option(arg, "--samples")) {
            size_t name_len = strcspn(arg, "=");
            const char *value = option_value(argc, argv, &i, arg, name_len);
            if (!value)
                return usage_error("%.*s needs a value", (int)name_len, arg);
            if (is_option(arg, "--policy")) {
                rc = parse_policies(value, cli);
            } else if (is_option(arg, "--index")) {
                if (!strcmp(value, "tree"))
                    cli->index = FA_LAB_INDEX_TREE;
                else if (!strcmp(value, "list"))
                    cli->index = FA_LAB_INDEX_LIST;
                else
                    rc = usage_error("--index: \"%s\" is not tree or list", value);
            } else if (is_option(arg, "--map-out")) {
                if (!*value)
                    rc = usage_error("--map-out needs a directory");
                cli->map_out = value;
            } else {
                rc = parse_samples(value, cli);
            }
        } else if (!strcmp(arg, "--engine")) {
            cli->engine = true;
        } else if (!strcmp(arg, "--mesh")) {
            cli->engine = cli->mesh = true;
        } else if (!strcmp(arg, "--json")) {
            json = true;
        } else if (!strcmp(arg, "--csv")) {
            csv = true;
        } else if (!strcmp(arg, "--dump")) {
            cli->dump = true;
        } else if (arg[0] == '-' && arg[1]) {
            rc = usage_error("unknown option %s", arg);
        } else if (cli->trace) {
            rc = usage_error("one trace at a time (%s, then %s)", cli->trace, arg);
        } else {
            cli->trace = arg;
        }
        if (rc)
            return rc;
    }
    if (cli->help)
        return 0;
    if (json && csv)
        return usage_error("--json and --csv exclude each other");
    cli->format = json ? FORMAT_JSON : csv ? FORMAT_CSV : FORMAT_TABLE;
    if (!cli->trace)
        return usage_error("no trace file given");
    if (!cli->policy_count && !cli->engine && !cli->dump)
        return usage_error("--policy none replays nothing without --engine");
    return 0;
}

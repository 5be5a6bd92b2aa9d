/* Command line shared by the workloads:  <name> --size smoke|real|full [--key value ...]
 *
 * smoke is the size the tests and the default bench use, real a longer run, full the original
 * parameters of the study (for the stress shapes, which have no original, full = real).
 * Every workload prints `ok <name> <checksum>` at the end when its own checks passed.
 */
#ifndef BENCH_ARGS_H
#define BENCH_ARGS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum bench_size { BENCH_SMOKE, BENCH_REAL, BENCH_FULL };

static inline void bench_usage(const char *usage)
{
    fprintf(stderr, "usage: %s\n", usage);
    exit(2);
}

/* The size, after checking that argv is `--size S` plus `--key value` pairs whose keys are
 * listed in `keys` (NULL-terminated; NULL for none). Exits 2 with `usage` otherwise. */
static inline enum bench_size bench_parse(int argc, char **argv, const char *usage,
                                          const char *const *keys)
{
    int size = -1;
    if ((argc - 1) % 2 != 0)
        bench_usage(usage);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--size") == 0) {
            const char *s = argv[i + 1];
            size = strcmp(s, "smoke") == 0  ? BENCH_SMOKE
                   : strcmp(s, "real") == 0 ? BENCH_REAL
                   : strcmp(s, "full") == 0 ? BENCH_FULL
                                            : -2;
            if (size == -2)
                bench_usage(usage);
            continue;
        }
        int known = 0;
        for (const char *const *k = keys; k && *k && !known; k++)
            known = strcmp(argv[i], *k) == 0;
        if (!known)
            bench_usage(usage);
    }
    if (size < 0)
        bench_usage(usage);
    return (enum bench_size)size;
}

/* The value of `--key value`, or `def` when the option is absent. */
static inline const char *bench_opt(int argc, char **argv, const char *key, const char *def)
{
    for (int i = 1; i + 1 < argc; i += 2)
        if (strcmp(argv[i], key) == 0)
            return argv[i + 1];
    return def;
}

/* A non-negative integer option; exits 2 with `usage` when it does not parse. */
static inline long bench_opt_long(int argc, char **argv, const char *key, long def,
                                  const char *usage)
{
    const char *s = bench_opt(argc, argv, key, NULL);
    if (!s)
        return def;
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < 0)
        bench_usage(usage);
    return v;
}

#endif

/* selftest: the bench's own test workload (hidden: not in any suite, used by
 * tests/bench/test_harness.sh).
 *
 * --mode ok       allocates and checks a few blocks, prints a figure and a histogram, succeeds
 * --mode corrupt  reports a corrupted block and exits 1, as a real workload would
 * --mode crash    dies of SIGABRT
 * --mode hang     sleeps until it is killed (the bench's timeout)
 *
 * usage: selftest --size smoke|real|full [--mode ok|corrupt|crash|hang]
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/args.h"
#include "lib/pattern.h"

#define USAGE "selftest --size smoke|real|full [--mode ok|corrupt|crash|hang]"

int main(int argc, char **argv)
{
    static const char *const keys[] = {"--mode", NULL};
    bench_parse(argc, argv, USAGE, keys);
    const char *mode = bench_opt(argc, argv, "--mode", "ok");
    if (strcmp(mode, "crash") == 0)
        abort();
    if (strcmp(mode, "hang") == 0)
        for (;;)
            pause();
    uint64_t sum = 0;
    for (int i = 1; i <= 100; i++) {
        size_t n = (size_t)i * 8;
        void *p = malloc(n);
        if (!p)
            return 1;
        tag_write(p, n, mix64((uint64_t)i));
        if (strcmp(mode, "corrupt") == 0 && i == 50)
            memset(p, 0, n);
        if (!tag_ok(p, n, mix64((uint64_t)i))) {
            fprintf(stderr, "selftest: CORRUPTION: block %d (%zu B) was overwritten\n", i, n);
            return 1;
        }
        free(p);
        sum += n;
    }
    if (strcmp(mode, "ok") != 0)
        bench_usage(USAGE);
    printf("blocks 100\nbytes %llu\nhist 8 3\nhist 16 1\n", (unsigned long long)sum);
    printf("ok selftest %016llx\n", (unsigned long long)mix64(sum));
    return 0;
}

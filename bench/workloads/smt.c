/* smt: an SMT solver at work: z3 (Debian's package) on a generated incremental problem.
 *
 * The program writes an SMT-LIB 2 script and runs `z3 -smt2` on it under the same allocator
 * (LD_PRELOAD is inherited); the time and peak RSS measured are z3's, which this program waits
 * for. The script: 30 integer variables in [-50, 50], then scopes of (push), six random linear
 * constraints between terms of up to 5 levels, (check-sat), (pop): z3 builds the terms, runs
 * its simplifier and its arithmetic solver, and frees it all again at each pop (about 3,000
 * mallocs per scope). The terms come from a fixed seed, so the answers (sat or unsat, a fact
 * about each scope) are the same under every allocator; their sequence is the checksum.
 * Scopes: smoke 600, real (= full) 6,000.
 *
 * usage: smt --size smoke|real|full   prints: scopes, sat, unsat, then ok smt <checksum>
 * Needs z3 on PATH (apt-get install z3); without it the run fails and says so.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/args.h"
#include "lib/pattern.h"

#define USAGE "smt --size smoke|real|full"
#define VARS 30
#define DEPTH 5
#define PER_SCOPE 6

static void term(FILE *f, int depth)
{
    uint64_t r = rng();
    if (depth == 0 || r % 5 == 0) {
        if (r % 10 < 7)
            fprintf(f, "x%d", (int)(rng() % VARS));
        else
            fprintf(f, "%d", (int)(rng() % 19) - 9);
        return;
    }
    if (r % 10 < 3) {
        fprintf(f, "(* %d ", (int)(rng() % 11) - 5);
        term(f, depth - 1);
        fputc(')', f);
        return;
    }
    fprintf(f, "(%c ", rng() % 2 ? '+' : '-');
    term(f, depth - 1);
    fputc(' ', f);
    term(f, depth - 1);
    fputc(')', f);
}

static void write_script(FILE *f, long scopes)
{
    static const char *const relations[] = {"<=", ">=", "="};
    fprintf(f, "(set-logic QF_LIA)\n");
    for (int i = 0; i < VARS; i++)
        fprintf(f, "(declare-const x%d Int)\n(assert (and (>= x%d -50) (<= x%d 50)))\n", i, i, i);
    for (long s = 0; s < scopes; s++) {
        fprintf(f, "(push 1)\n");
        for (int c = 0; c < PER_SCOPE; c++) {
            fprintf(f, "(assert (%s ", relations[rng() % 3]);
            term(f, DEPTH);
            fputc(' ', f);
            term(f, DEPTH);
            fprintf(f, "))\n");
        }
        fprintf(f, "(check-sat)\n(pop 1)\n");
    }
}

int main(int argc, char **argv)
{
    long scopes = bench_parse(argc, argv, USAGE, NULL) == BENCH_SMOKE ? 600 : 6000;
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char path[4096];
    snprintf(path, sizeof path, "%s/fitalloc-smt-XXXXXX", dir);
    int fd = mkstemp(path);
    FILE *script = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!script) {
        perror("smt: the script file");
        return 1;
    }
    rng_seed(1);
    write_script(script, scopes);
    if (fclose(script) != 0) {
        perror("smt: writing the script");
        unlink(path);
        return 1;
    }

    int out[2];
    if (pipe(out) != 0) {
        perror("smt: pipe");
        unlink(path);
        return 1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out[1], 1);
        close(out[0]);
        close(out[1]);
        execlp("z3", "z3", "-smt2", path, (char *)NULL);
        fprintf(stderr, "smt: cannot run z3 (apt-get install z3)\n");
        _exit(127);
    }
    close(out[1]);
    FILE *answers = pid > 0 ? fdopen(out[0], "r") : NULL;
    if (!answers) {
        perror("smt: running z3");
        unlink(path);
        return 1;
    }
    long sat = 0, unsat = 0, other = 0;
    uint64_t sum = 0;
    char line[256];
    while (fgets(line, sizeof line, answers)) {
        int is_sat = strcmp(line, "sat\n") == 0, is_unsat = strcmp(line, "unsat\n") == 0;
        sat += is_sat;
        unsat += is_unsat;
        other += !is_sat && !is_unsat;
        sum = mix64(sum ^ (uint64_t)(is_sat ? 1 : is_unsat ? 2 : 3));
        if (other == 1 && !is_sat && !is_unsat)
            fprintf(stderr, "smt: z3 said: %s", line);
    }
    fclose(answers);
    unlink(path);
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        if (WIFSIGNALED(status))
            fprintf(stderr, "smt: z3 was killed by signal %d\n", WTERMSIG(status));
        else
            fprintf(stderr, "smt: z3 failed (exit status %d)\n", WEXITSTATUS(status));
        return 1;
    }
    if (sat + unsat != scopes || other) {
        fprintf(stderr, "smt: %ld answers of %ld scopes, %ld other lines\n", sat + unsat, scopes,
                other);
        return 1;
    }
    printf("scopes %ld\nsat %ld\nunsat %ld\n", scopes, sat, unsat);
    printf("ok smt %016llx\n", (unsigned long long)sum);
    return 0;
}

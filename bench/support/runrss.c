/* runrss: run one program and report its own rusage (bench/compare.py helper).
 *
 *   runrss <statfile> <preload|""> <program> [args...]
 *
 * Forks, sets LD_PRELOAD=<preload> in the child only (unset when empty),
 * execs <program>, waits for it with wait4() and writes one line to
 * <statfile>:
 *     exit <code> signal <sig> utime <s> stime <s> maxrss <KiB>
 * then exits with the child's exit code (128+signal if it was killed).
 *
 * Why not wait4() directly from Python: on Linux, ru_maxrss of a child keeps
 * the RSS high-water mark of the process it was forked from (exec records
 * the old mm's peak), so every run launched from Python would report at
 * least Python's own ~14 MB. Forking from this tiny program keeps that floor
 * near 1 MB. Only the child runs under the allocator being measured.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: runrss <statfile> <preload|\"\"> <program> [args...]\n");
        return 2;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("runrss: fork");
        return 2;
    }
    if (pid == 0) {
        if (argv[2][0])
            setenv("LD_PRELOAD", argv[2], 1);
        else
            unsetenv("LD_PRELOAD");
        execv(argv[3], argv + 3);
        fprintf(stderr, "runrss: exec %s: %s\n", argv[3], strerror(errno));
        _exit(127);
    }
    int st;
    struct rusage ru;
    while (wait4(pid, &st, 0, &ru) < 0) {
        if (errno != EINTR) {
            perror("runrss: wait4");
            return 2;
        }
    }
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    int sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    FILE *f = fopen(argv[1], "w");
    if (!f) {
        perror("runrss: statfile");
        return 2;
    }
    fprintf(f, "exit %d signal %d utime %ld.%06ld stime %ld.%06ld maxrss %ld\n", code, sig,
            (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec, (long)ru.ru_stime.tv_sec,
            (long)ru.ru_stime.tv_usec, ru.ru_maxrss);
    fclose(f);
    return sig ? 128 + sig : code;
}

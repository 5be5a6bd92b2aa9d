/* The program of test_fork.sh: usage fork DIR EXEC_PROGRAM.
 * Before fork the parent makes the calls "before"; the child then makes the calls "child" and
 * exits; the parent waits for it, makes the calls "after", starts EXEC_PROGRAM with fork and
 * exec (a traced program started by a traced one), waits for it and exits. Each sequence is
 * logged in static memory ("op size align_log2 in out") and written to DIR/<name>.log at the
 * end; DIR/pids holds "parent PID", "child PID", "exec PID". */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "call.h"

struct log {
    struct call calls[64];
    int count;
};
static struct log before, child, after;

/* A recognisable sequence: blocks of base, base + 1, ... bytes, freed in another order. */
static void sequence(struct log *log, size_t base)
{
    void *p[8];
    for (int i = 0; i < 8; i++) {
        p[i] = malloc(base + (size_t)i);
        log->calls[log->count++] =
            (struct call){.op = MALLOC, .size = base + (size_t)i, .out = (uintptr_t)p[i]};
    }
    for (int i = 7; i >= 0; i -= 2) {
        free(p[i]);
        log->calls[log->count++] = (struct call){.op = FREE, .in = (uintptr_t)p[i]};
    }
    for (int i = 0; i < 8; i += 2) {
        free(p[i]);
        log->calls[log->count++] = (struct call){.op = FREE, .in = (uintptr_t)p[i]};
    }
}

static void write_log(const char *dir, const char *name, const struct log *log)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.log", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        exit(3);
    for (int i = 0; i < log->count; i++)
        fprintf(f, "%d %zu 0 %llu %llu\n", log->calls[i].op, log->calls[i].size,
                (unsigned long long)log->calls[i].in, (unsigned long long)log->calls[i].out);
    fclose(f);
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    sequence(&before, 3001);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return 4;
    if (pid == 0) {
        sequence(&child, 5001);
        write_log(argv[1], "child", &child);
        exit(0);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return 5;
    sequence(&after, 7001);
    pid_t exec_pid = fork();
    if (exec_pid == 0) {
        execl(argv[2], argv[2], (char *)NULL);
        _exit(127);
    }
    if (exec_pid < 0 || waitpid(exec_pid, &status, 0) != exec_pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        return 6;
    write_log(argv[1], "before", &before);
    write_log(argv[1], "after", &after);
    char path[4096];
    snprintf(path, sizeof path, "%s/pids", argv[1]);
    FILE *f = fopen(path, "w");
    if (!f)
        return 3;
    fprintf(f, "parent %d\nchild %d\nexec %d\n", (int)getpid(), (int)pid, (int)exec_pid);
    fclose(f);
    return 0;
}

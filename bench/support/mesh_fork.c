/* mesh_fork: what a fork costs a process with much meshed, as issue 36 measures it. Builds the
 * heap of fragment.c (N 64-byte blocks, default 2,000,000, each filled with its own byte, a
 * random 90 % freed), waits for the mesher (until its kernel mappings have not changed for a
 * second; 30 s at most), prints the mappings and PSS,
 * then forks R times (default 11) for each of two children: one that exits at once, one that
 * first reads every live block (checking its bytes) and writes it into a pipe (a system call
 * reading the block). Each fork is timed from fork() to the end of waitpid(): the wall time,
 * and the CPU time (the parent thread's during fork(), plus the child's, from RUSAGE_CHILDREN),
 * which a loaded machine disturbs less. Prints the medians.
 *
 *   cc -O2 bench/support/mesh_fork.c -o mesh_fork
 *   FITALLOC_MESH=1 LD_PRELOAD=build/libfitalloc.so ./mesh_fork     (and FITALLOC_MESH=0)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static size_t n;
static unsigned char **p;

static double ms(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static double children_cpu_ms(void)
{
    struct rusage u;
    getrusage(RUSAGE_CHILDREN, &u);
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
           (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

static long count_lines(const char *path, const char *prefix, long *value)
{
    char line[512];
    long lines = 0;
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f)) {
        lines++;
        if (prefix && strncmp(line, prefix, strlen(prefix)) == 0)
            *value = strtol(line + strlen(prefix), NULL, 10);
    }
    if (f)
        fclose(f);
    return lines;
}

/* The child that reads: every live block checked, then written into a pipe by the kernel. */
static int child_reads(void)
{
    int fds[2];
    char sink[64];
    if (pipe(fds) != 0)
        return 2;
    for (size_t i = 0; i < n; i++) {
        if (!p[i])
            continue;
        for (size_t j = 0; j < 64; j++)
            if (p[i][j] != (unsigned char)(i & 0xff))
                return 1;
        if (write(fds[1], p[i], 64) != 64 || read(fds[0], sink, 64) != 64)
            return 3;
    }
    return 0;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void time_forks(const char *name, int rounds, int reads)
{
    double wall[64], cpu[64];
    for (int r = 0; r < rounds; r++) {
        double w0 = ms(CLOCK_MONOTONIC), c0 = ms(CLOCK_THREAD_CPUTIME_ID), k0 = children_cpu_ms();
        pid_t child = fork();
        if (child == 0)
            _exit(reads ? child_reads() : 0);
        double c1 = ms(CLOCK_THREAD_CPUTIME_ID);
        int status;
        if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0) {
            printf("%s: the child failed (status %d)\n", name, status);
            exit(1);
        }
        wall[r] = ms(CLOCK_MONOTONIC) - w0;
        cpu[r] = (c1 - c0) + (children_cpu_ms() - k0);
    }
    qsort(wall, (size_t)rounds, sizeof *wall, by_value);
    qsort(cpu, (size_t)rounds, sizeof *cpu, by_value);
    printf("%-32s wall %7.1f ms  cpu %7.1f ms  (medians of %d; wall min %.1f)\n", name,
           wall[rounds / 2], cpu[rounds / 2], rounds, wall[0]);
}

int main(int argc, char **argv)
{
    n = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000000;
    int rounds = argc > 2 ? atoi(argv[2]) : 11;
    if (rounds < 1 || rounds > 64)
        return 2;
    p = malloc(n * sizeof *p);
    if (!p)
        return 2;
    for (size_t i = 0; i < n; i++) {
        p[i] = malloc(64);
        if (!p[i])
            return 2;
        memset(p[i], (int)(i & 0xff), 64);
    }
    srand(1);
    for (size_t i = 0; i < n; i++)
        if (rand() % 10) {
            free(p[i]);
            p[i] = NULL;
        }
    long mappings = -1, now;
    for (int s = 0; s < 30 && (now = count_lines("/proc/self/maps", NULL, NULL)) != mappings; s++) {
        mappings = now;
        sleep(1);
    }
    long pss = -1;
    count_lines("/proc/self/smaps_rollup", "Pss:", &pss);
    printf("mappings %ld, pss %ld MiB\n", mappings, pss >> 10);
    time_forks("fork, child exits", rounds, 0);
    time_forks("fork, child reads every block", rounds, 1);
    return 0;
}

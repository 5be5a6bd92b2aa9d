/* fragment: the heap whose blocks die at random, as issue "meshing" measures it. Allocates N
 * 64-byte blocks (default 2,000,000), each filled with its own byte, frees a random 90 % of
 * them, then prints the process's RSS and PSS every 200 ms for 2 s, the time of a fork (best of
 * 5: fork, the child's exit, the wait; meshed pages are copied for the child), checks that every
 * live block kept its bytes (exit 1 if not), and prints RSS and PSS again; then allocates 128 MiB
 * more in 640-byte blocks and prints them once more after a second. The live bytes are the
 * blocks left plus the pointer arrays. PSS is the memory to go by: a physical page mapped at two
 * addresses of the process (a meshed page, once both are touched) counts twice in RSS, once in
 * PSS.
 *
 *   cc -O2 bench/support/fragment.c -o fragment
 *   FITALLOC_MESH=1 LD_PRELOAD=build/libfitalloc.so ./fragment      (and without FITALLOC_MESH)
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long rss_mib(void)
{
    long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f || fscanf(f, "%ld %ld", &size, &resident) != 2)
        exit(2);
    fclose(f);
    return resident * 4096 >> 20;
}

static long pss_mib(void)
{
    char line[256];
    long kib = -1;
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Pss: %ld kB", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib < 0 ? -1 : kib >> 10;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000000, size = 64, live = 0;
    unsigned char **p = malloc(n * sizeof *p);
    if (!p)
        return 2;
    for (size_t i = 0; i < n; i++) {
        p[i] = malloc(size);
        if (!p[i])
            return 2;
        memset(p[i], (int)(i & 0xff), size);
    }
    printf("allocated: rss %ld MiB\n", rss_mib());
    srand(1);
    for (size_t i = 0; i < n; i++) {
        if (rand() % 10) {
            free(p[i]);
            p[i] = NULL;
        } else {
            live++;
        }
    }
    printf("freed 90 %%: rss %ld MiB, pss %ld MiB, live %zu MiB (%zu blocks) + array %zu MiB\n",
           rss_mib(), pss_mib(), live * size >> 20, live, n * sizeof *p >> 20);
    struct timespec tick = {0, 200 * 1000 * 1000};
    for (int t = 1; t <= 10; t++) {
        nanosleep(&tick, NULL);
        printf("%.1f s: rss %ld MiB, pss %ld MiB\n", t * 0.2, rss_mib(), pss_mib());
    }
    double best = 1e9;
    for (int r = 0; r < 5; r++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        pid_t child = fork();
        if (child == 0)
            _exit(0);
        if (child < 0 || waitpid(child, NULL, 0) != child)
            return 2;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
        best = ms < best ? ms : best;
    }
    printf("fork + exit + wait: %.1f ms (best of 5)\n", best);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; p[i] && j < size; j++)
            if (p[i][j] != (unsigned char)(i & 0xff)) {
                printf("block %zu lost its data\n", i);
                return 1;
            }
    printf("every live block read: rss %ld MiB, pss %ld MiB\n", rss_mib(), pss_mib());
    /* Then a new phase of bigger blocks, which the freed 64-byte slots cannot hold. */
    size_t more = ((size_t)128 << 20) / 640;
    char **q = malloc(more * sizeof *q);
    if (!q)
        return 2;
    for (size_t i = 0; i < more; i++) {
        q[i] = malloc(640);
        if (!q[i])
            return 2;
        memset(q[i], 7, 640);
    }
    struct timespec second = {1, 0};
    nanosleep(&second, NULL);
    printf("128 MiB more of 640-byte blocks, 1 s later: rss %ld MiB, pss %ld MiB, live %zu MiB\n",
           rss_mib(), pss_mib(),
           (live * size + n * sizeof *p + more * 640 + more * sizeof *q) >> 20);
    for (size_t i = 0; i < more; i++)
        free(q[i]);
    free(q);
    for (size_t i = 0; i < n; i++)
        free(p[i]);
    free(p);
    return 0;
}

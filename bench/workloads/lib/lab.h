/* The policy lab's statistics, read without depending on fitalloc.
 *
 * fa_lab_stats_get and fa_lab_hist_write are declared weak: under another allocator (or a
 * libfitalloc.so without the lab) they are NULL and the workload simply prints no lab figures,
 * so the same binary runs under every allocator. Figures are printed as `<prefix>lab.<field>
 * <value>` lines, the histogram as `hist <size> <count>` lines (the bench parses both).
 */
#ifndef BENCH_LAB_H
#define BENCH_LAB_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../../include/fitalloc-lab.h"

#pragma weak fa_lab_stats_get
#pragma weak fa_lab_hist_write

/* 1 with *s filled when this process runs on the lab engine, else 0. */
static inline int lab_stats(struct fa_lab_stats *s)
{
    memset(s, 0, sizeof *s);
    s->size = sizeof *s;
    return fa_lab_stats_get && fa_lab_stats_get(s) == 0;
}

#define LAB_U64_FIELDS(X)                                                                          \
    X(mallocs)                                                                                     \
    X(frees)                                                                                       \
    X(reuses)                                                                                      \
    X(grows)                                                                                       \
    X(splits)                                                                                      \
    X(coalesces)                                                                                   \
    X(blocks)                                                                                      \
    X(requested)                                                                                   \
    X(max_heap)                                                                                    \
    X(free_blocks)                                                                                 \
    X(free_bytes)                                                                                  \
    X(largest_free)                                                                                \
    X(heap_bytes)                                                                                  \
    X(free_space_with_headers)                                                                     \
    X(direct_allocs)                                                                               \
    X(direct_frees)                                                                                \
    X(direct_bytes)                                                                                \
    X(lock_acquisitions)                                                                           \
    X(lock_contended)                                                                              \
    X(futex_waits)                                                                                 \
    X(futex_wakes)                                                                                 \
    X(heaps)

static inline void lab_print(const char *prefix, const struct fa_lab_stats *s)
{
#define LAB_PRINT_U64(f) printf("%slab." #f " %llu\n", prefix, (unsigned long long)s->f);
    LAB_U64_FIELDS(LAB_PRINT_U64)
#undef LAB_PRINT_U64
    printf("%slab.frag_free_over_heap %.6f\n", prefix, s->frag_free_over_heap);
    printf("%slab.frag_largest_over_free %.6f\n", prefix, s->frag_largest_over_free);
}

/* Print the lab's free-block histogram as `hist <size> <count>` lines; 0 if there is none.
 * WHY read(2) and not stdio: fopen allocates, and the 64 KiB arena of id1206 may be full. */
static inline int lab_hist_print(void)
{
    if (!fa_lab_hist_write)
        return 0;
    char path[64];
    snprintf(path, sizeof path, "/tmp/fitalloc-bench-hist.%ld", (long)getpid());
    if (fa_lab_hist_write(path) != 0)
        return 0;
    int fd = open(path, O_RDONLY);
    unlink(path);
    if (fd < 0)
        return 0;
    static char buf[1 << 16];
    size_t have = 0;
    int lines = 0;
    for (;;) {
        ssize_t got = read(fd, buf + have, sizeof buf - 1 - have);
        if (got <= 0)
            break;
        have += (size_t)got;
        buf[have] = '\0';
        char *line = buf, *nl;
        while ((nl = strchr(line, '\n'))) {
            unsigned long long size, count;
            *nl = '\0';
            if (sscanf(line, "%llu %llu", &size, &count) == 2) {
                printf("hist %llu %llu\n", size, count);
                lines++;
            }
            line = nl + 1;
        }
        have = (size_t)(buf + have - line);
        memmove(buf, line, have);
    }
    close(fd);
    return lines;
}

#endif

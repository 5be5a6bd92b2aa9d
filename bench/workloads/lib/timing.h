/* The studies time their measured region with CLOCK_MONOTONIC and print seconds. */
#ifndef BENCH_TIMING_H
#define BENCH_TIMING_H

#include <time.h>

static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif

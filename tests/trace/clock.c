/* The program of test_clock.sh: the times a trace gives its calls against the clock. It makes
 * 2,000 fast calls (malloc and free of small blocks), then 80 slow ones (a malloc every 1 ms),
 * then 1,000 fast ones again, reading CLOCK_MONOTONIC itself just before and just after each
 * call; then it prints one line a call: "op size 0 in out before_ns after_ns" (static memory:
 * logging must not allocate). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "call.h"

static struct call calls[4096];
static int count;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *traced_malloc(size_t n)
{
    uint64_t before = now_ns();
    void *p = malloc(n);
    calls[count++] = (struct call){MALLOC, n, 0, (uintptr_t)p, before, now_ns()};
    return p;
}

static void traced_free(void *p)
{
    uint64_t before = now_ns();
    free(p);
    calls[count++] = (struct call){FREE, 0, (uintptr_t)p, 0, before, now_ns()};
}

int main(void)
{
    static void *slow[80];
    for (int i = 0; i < 1000; i++)
        traced_free(traced_malloc(16 + (size_t)(i % 64)));
    for (int i = 0; i < 80; i++) {
        usleep(1000);
        slow[i] = traced_malloc(100);
    }
    for (int i = 0; i < 500; i++)
        traced_free(traced_malloc(16 + (size_t)(i % 64)));
    for (int i = 0; i < 80; i++)
        free(slow[i]);
    for (int i = 0; i < count; i++)
        printf("%d %zu 0 %llu %llu %llu %llu\n", calls[i].op, calls[i].size,
               (unsigned long long)calls[i].in, (unsigned long long)calls[i].out,
               (unsigned long long)calls[i].before, (unsigned long long)calls[i].after);
    return 0;
}

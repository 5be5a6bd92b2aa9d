/* The heap profiler's program of known sites (issue 41's acceptance program): 64 MiB in 64 KiB
 * blocks from hold_big_blocks, 8 MiB in 64-byte blocks from hold_small_blocks, 4 MiB in 4 KiB
 * blocks leaked by leak_pages, then CHURN_MIB MiB (argument 1; default 1024) allocated and freed
 * in 1 KiB blocks by churn, never more than 1 MiB live. At its peak it calls gperftools'
 * HeapProfilerDump when the process has one (tcmalloc preloaded with HEAPPROFILE), so that
 * tcmalloc writes the peak profile too. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#define BIG_BLOCKS 1024     /* of 64 KiB */
#define SMALL_BLOCKS 131072 /* of 64 bytes */
#define LEAKED_BLOCKS 1024  /* of 4 KiB */

static void *big[BIG_BLOCKS];
static void *small[SMALL_BLOCKS];

/* noinline and a use of every block: each site stays a function of its own, its blocks kept. */
__attribute__((noinline)) static void hold_big_blocks(void)
{
    for (int i = 0; i < BIG_BLOCKS; i++)
        memset(big[i] = malloc(65536), 1, 65536);
}

__attribute__((noinline)) static void hold_small_blocks(void)
{
    for (int i = 0; i < SMALL_BLOCKS; i++)
        memset(small[i] = malloc(64), 1, 64);
}

__attribute__((noinline)) static void leak_pages(void)
{
    for (int i = 0; i < LEAKED_BLOCKS; i++) {
        void *p = malloc(4096);
        memset(p, 1, 4096);
        __asm__ volatile("" : : "r"(p) : "memory");
    }
}

__attribute__((noinline)) static void churn(long mib)
{
    void *live[1024] = {0};
    for (long i = 0; i < mib * 1024; i++) {
        free(live[i % 1024]);
        memset(live[i % 1024] = malloc(1024), 1, 16);
    }
    for (int i = 0; i < 1024; i++)
        free(live[i]);
}

int main(int argc, char **argv)
{
    long churn_mib = argc > 1 ? atol(argv[1]) : 1024;
    hold_big_blocks();
    hold_small_blocks();
    leak_pages();
    void (*dump)(const char *) = (void (*)(const char *))dlsym(RTLD_DEFAULT, "HeapProfilerDump");
    if (dump)
        dump("peak");
    for (int i = 0; i < BIG_BLOCKS; i++)
        free(big[i]);
    for (int i = 0; i < SMALL_BLOCKS; i++)
        free(small[i]);
    churn(churn_mib);
    return 0;
}

/* labprobe: is the policy lab running this process? (bench/harness/allocators.py helper)
 *
 * Run under LD_PRELOAD=libfitalloc.so with a lab configuration's FITALLOC_* variables. Prints
 * `lab 1 heaps <n>` when fa_lab_stats_get exists and answers, else `lab 0` (another allocator,
 * or a libfitalloc.so without the lab, where FITALLOC_MODE=lab runs the fast engine).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include "../workloads/lib/lab.h"

int main(void)
{
    void *p = malloc(100); /* make sure the allocator has started */
    free(p);
    struct fa_lab_stats s;
    if (lab_stats(&s))
        printf("lab 1 heaps %llu\n", (unsigned long long)s.heaps);
    else
        printf("lab 0\n");
    return 0;
}

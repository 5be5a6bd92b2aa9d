/* dirty_calloc: a calloc that does not zero, for test_workloads.sh (LD_PRELOAD).
 *
 * calloc returns malloc's block (the system malloc's, found through the symbol lookup of the
 * rest of the process) with its first page filled with 0xa5, so a workload that relies on
 * calloc's zeroes must notice. Everything else is the system allocator.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void *calloc(size_t count, size_t n)
{
    if (n && count > SIZE_MAX / n) {
        errno = ENOMEM;
        return NULL;
    }
    size_t bytes = count * n;
    void *p = malloc(bytes);
    if (p)
        memset(p, 0xa5, bytes < 4096 ? bytes : 4096);
    return p;
}

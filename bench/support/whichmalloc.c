/* whichmalloc: print which shared object malloc and free resolve to.
 * bench/compare.py runs it under each allocator's LD_PRELOAD to make sure
 * the preload really took effect (ld.so only warns and goes on with glibc
 * when a preload cannot be loaded).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static const char *where(void *fn)
{
    Dl_info info;
    if (dladdr(fn, &info) && info.dli_fname)
        return info.dli_fname;
    return "?";
}

int main(void)
{
    void *p = malloc(100);
    if (!p)
        return 1;
    free(p);
    printf("malloc %s\n", where((void *)malloc));
    printf("free %s\n", where((void *)free));
    return 0;
}

/* The consumer program of the installed package (tests/install/test_install.sh and
 * tools/package.sh --test): built with pkg-config's flags or CMake's find_package, it checks
 * that fa_malloc gives a usable 16-byte aligned block and that the program's malloc is
 * fitalloc's, then prints "fitalloc ok <version>". */
#include <fitalloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    unsigned char *p = fa_malloc(100);
    if (p == NULL || (uintptr_t)p % 16 != 0) {
        printf("fa_malloc(100) returned %p, not a 16-byte aligned block\n", (void *)p);
        return 1;
    }
    memset(p, 0xab, 100);
    if (p[0] != 0xab || p[99] != 0xab) {
        puts("the block does not hold what was written");
        return 1;
    }
    fa_free(p);
    /* Linked with libfitalloc, malloc is fitalloc's: its usable size is fitalloc's to tell. */
    char *q = malloc(100);
    if (q == NULL || fa_malloc_usable_size(q) < 100) {
        puts("malloc(100) is not fitalloc's");
        return 1;
    }
    free(q);
    printf("fitalloc ok %d.%d.%d\n", FITALLOC_VERSION_MAJOR, FITALLOC_VERSION_MINOR,
           FITALLOC_VERSION_PATCH);
    return 0;
}

/* ctest labels: reliability */
/* FITALLOC_HUGE_PAGES=1 asks the kernel for transparent huge pages behind segments and large
 * blocks, and only then: the mappings holding a small block and a large block carry the "hg"
 * flag (MADV_HUGEPAGE) in /proc/self/smaps with the option on, not with it off. The test runs
 * itself twice, once with each value. Skipped (77) on a kernel without transparent huge pages. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "rerun.h"
#include "fitalloc.h"

/* 1 if the mapping of /proc/self/smaps that contains a has the hg flag, 0 if not. */
static int has_huge_flag(uintptr_t a)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    CHECK(f != NULL);
    char line[512];
    bool inside = false;
    int found = -1;
    while (found < 0 && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
            inside = lo <= a && a < hi;
        else if (inside && !strncmp(line, "VmFlags:", 8))
            found = strstr(line, " hg") != NULL;
    }
    fclose(f);
    CHECK_MSG(found >= 0, "no mapping holds %#lx", (unsigned long)a);
    return found;
}

static int child(int want)
{
    void *small = fa_malloc(100);
    void *large = fa_malloc(8 << 20);
    CHECK(small && large);
    CHECK_EQ(has_huge_flag((uintptr_t)small), want);
    CHECK_EQ(has_huge_flag((uintptr_t)large), want);
    fa_free(small);
    fa_free(large);
    return 0;
}

int main(int argc, char **argv)
{
    (void)argc;
    if (access("/sys/kernel/mm/transparent_hugepage/enabled", R_OK) != 0) {
        printf("no transparent huge pages in this kernel: skipped\n");
        return 77;
    }
    int on = fa_test_off_on(argv, "FITALLOC_HUGE_PAGES", NULL);
    if (on >= 0)
        return child(on);
    printf("ok: the hg flag follows FITALLOC_HUGE_PAGES\n");
    return 0;
}

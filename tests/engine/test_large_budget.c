/* ctest labels: reliability */
/* The budget for freed large memory kept mapped (engine/large_source.c, _fa_large_budget): at
 * least FITALLOC_LARGE_CACHE, and up to half the bytes the live large blocks hold.
 * The test runs itself with FITALLOC_LARGE_CACHE=1M (and a purge delay no step outlasts, and
 * no watching of how blocks are used):
 *   1. An 8 MiB block freed while no other large block lives: beyond the 1 MiB budget, its
 *      mapping goes back to the OS (the reserved bytes drop by its size).
 *   2. The same while six 8 MiB blocks live (48 MiB; half of it is more than the block): its
 *      mapping is kept (the reserved bytes stay), and the next 8 MiB malloc reuses it, one
 *      page further in than the block freed there (engine/large.c).
 * And with FITALLOC_LARGE_CACHE=0 step 2 unmaps too: 0 keeps nothing, whatever lives. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rerun.h"
#include "stats.h"
#include "fitalloc.h"

#define MIB ((size_t)1 << 20)
#define PAGE ((size_t)4096)
#define LIVE 6

/* Free an 8 MiB block while `live` others of that size live; whether its mapping was kept. */
static int kept_after_free(size_t live)
{
    void *others[LIVE];
    for (size_t i = 0; i < live; i++) {
        others[i] = fa_malloc(8 * MIB);
        CHECK(others[i] != NULL);
        memset(others[i], 1, 8 * MIB);
    }
    char *p = fa_malloc(8 * MIB);
    CHECK(p != NULL);
    memset(p, 2, 8 * MIB);
    uint64_t before = fa_test_stats().reserved;
    fa_free(p);
    uint64_t after = fa_test_stats().reserved;
    int kept = after == before;
    if (!kept)
        CHECK_MSG(before - after >= 8 * MIB, "a freed 8 MiB block gave back only %llu bytes",
                  (unsigned long long)(before - after));
    char *q = fa_malloc(8 * MIB);
    CHECK(q != NULL);
    if (kept)
        CHECK_MSG(q == p + PAGE, "the kept mapping was not reused: %p after %p", (void *)q,
                  (void *)p);
    fa_free(q);
    for (size_t i = 0; i < live; i++)
        fa_free(others[i]);
    return kept;
}

int main(int argc, char **argv)
{
    (void)argc;
    const char *mode = getenv("FA_TEST_BUDGET");
    if (mode) {
        int floor_only = strcmp(mode, "floor") == 0;
        CHECK_MSG(!kept_after_free(0), "a block beyond the budget was kept");
        CHECK_MSG(kept_after_free(LIVE) == !floor_only,
                  floor_only ? "FITALLOC_LARGE_CACHE=0 kept a freed block"
                             : "a block within half the live large bytes was not kept");
        return 0;
    }
    const char *share[] = {"FA_TEST_BUDGET=share",       "FITALLOC_LARGE_CACHE=1M",
                           "FITALLOC_PURGE_DELAY=60000", "FITALLOC_CALLOC_POPULATE=0",
                           "FITALLOC_PURGE_THREAD=0",    NULL};
    fa_test_rerun("FITALLOC_LARGE_CACHE=1M", share, argv);
    const char *none[] = {"FA_TEST_BUDGET=floor", "FITALLOC_LARGE_CACHE=0",
                          "FITALLOC_CALLOC_POPULATE=0", NULL};
    fa_test_rerun("FITALLOC_LARGE_CACHE=0", none, argv);
    printf("ok: freed large memory kept up to half the live large bytes, none with 0\n");
    return 0;
}

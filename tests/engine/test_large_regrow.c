/* ctest labels: reliability */
/* A buffer grown by realloc inside a bigger mapping reused for it keeps that mapping's pages.
 *
 * An 8 MiB block written whole and freed waits in the large-block cache. The next large block,
 * 600 KiB, reuses that mapping (its pages are resident already). realloc then grows the block
 * in steps of 64 KiB up to 7 MiB: each step fits in the mapping, so the block stays where it is,
 * keeps its contents, and the pages it grows into are the mapping's own, resident before the
 * program writes them. (A step once looked like a shrink, the request being less than half of
 * the mapping: the tail went back to the OS and every later step grew the block with fresh
 * pages, a fault each.) The test runs itself with a purge delay no step outlasts. A
 * ThreadSanitizer build keeps the cache too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rerun.h"
#include "rss.h"
#include "fitalloc.h"

#define MIB ((size_t)1 << 20)
#define KIB ((size_t)1 << 10)
#define PAGE ((size_t)4096)

static int child(void)
{
    unsigned char *old = fa_malloc(8 * MIB);
    CHECK(old != NULL);
    memset(old, 0xa5, 8 * MIB);
    fa_free(old);

    size_t n = 600 * KIB;
    unsigned char *p = fa_malloc(n);
    CHECK(p != NULL);
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 7u + 1);
    for (n += 64 * KIB; n <= 7 * MIB; n += 64 * KIB) {
        unsigned char *q = fa_realloc(p, n);
        CHECK_MSG(q == p, "realloc to %zu bytes moved the block", n);
    }
    n -= 64 * KIB;
    size_t pages = n / PAGE;
    size_t resident = fa_test_resident_pages(p, n);
    CHECK_MSG(resident + pages / 16 >= pages, "%zu of %zu pages resident before any write",
              resident, pages);
    for (size_t i = 0; i < 600 * KIB; i++)
        CHECK_MSG(p[i] == (unsigned char)(i * 7u + 1), "byte %zu lost", i);
    fa_free(p);
    return 0;
}

int main(int argc, char **argv)
{
    (void)argc;
    if (getenv("FA_TEST_REGROW"))
        return child();
    const char *env[] = {"FA_TEST_REGROW=1", "FITALLOC_LARGE_CACHE=64M",
                         "FITALLOC_PURGE_DELAY=60000", NULL};
    fa_test_rerun("with the large-block cache", env, argv);
    printf("ok: a block grown by realloc into a reused mapping keeps its pages\n");
    return 0;
}

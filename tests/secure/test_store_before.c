/* ctest labels: errors */
/* A one-byte store 32 bytes before a block (the battery's store-32-before) must be reported at
 * the block's free whatever the slot before it holds (FITALLOC_SECURE=1; the test runs itself
 * again with it set). A live block's own bytes there would hide it: every slot keeps its last
 * 32 bytes from the program (its trailer and 16 canary bytes at least). For each small and
 * medium class, its largest request and the one 16 bytes smaller (with only a 16-byte trailer
 * both reached within 32 bytes of the slot's end), a forked child stores before a block whose
 * slot before holds a live block, then frees it; in classes whose free blocks are not filled
 * whole (over 4608 bytes), also with the slot before freed (its tail fill). 8-byte blocks: 200
 * times, each with another live neighbour. The report: an underflow (of the block, or into the
 * guard page before a big one), or a write after free of the freed slot before it. */
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "block_set.h"
#include "check.h"
#include "child.h"
#include "engine/size_class.h"
#include "fitalloc.h"
#include "rerun.h"

#define MAX_BLOCKS 1024
#define EIGHT_TRIES 200

static char *blocks[MAX_BLOCKS];
static size_t count;
static char out[4096];
static unsigned children;

static void store_and_free(void *arg)
{
    char *block = arg;
    volatile char *v = (volatile char *)block;
    v[-32] = 0x41;
    fa_free(block);
}

/* Blocks of n bytes, up to 4 MiB of them (8 at least), and the slot size: the smallest distance
 * between two of them (blocks of two pages lie farther apart). */
static size_t allocate(size_t n)
{
    count = ((size_t)4 << 20) / n;
    count = count < 8 ? 8 : count > MAX_BLOCKS ? MAX_BLOCKS : count;
    for (size_t i = 0; i < count; i++) {
        blocks[i] = fa_malloc(n);
        CHECK(blocks[i] != NULL);
    }
    size_t d = fa_test_slot_size(blocks, count);
    CHECK(d != SIZE_MAX);
    return d;
}

static void expect_report(char *block, size_t n, const char *before, const char *expected)
{
    char what[96];
    snprintf(what, sizeof what, "a store 32 bytes before a %zu-byte block (%s before it)", n,
             before);
    children++;
    fa_test_expect_abort(what, store_and_free, block, expected, out, sizeof out);
}

/* The store before `tries` blocks of n bytes whose slot before holds a live block, each with
 * another; then, if `freed`, before one whose slot before holds a freed block. */
static void stores_before(size_t n, size_t tries, bool freed)
{
    size_t d = allocate(n);
    size_t tried = 0;
    char *freed_before = NULL;
    /* A request that does not fit a medium slot with its reserve gets a big one, after a guard
     * page: the store faults there. */
    bool guarded = n + 32 > FA_MEDIUM_MAX;
    for (size_t i = 0; i < count && (tried < tries || (freed && !freed_before)); i++) {
        char *b = blocks[i] + d;
        if (!fa_test_in_blocks(blocks, count, b))
            continue;
        if (tried < tries) {
            expect_report(b, n, "live", "underflow");
            tried++;
        } else {
            freed_before = blocks[i];
            fa_free(freed_before);
            expect_report(b, n, "freed", guarded ? "underflow" : "write after free");
        }
    }
    CHECK_MSG(tried == tries && (!freed || freed_before), "%zu-byte blocks: %zu of %zu in a row", n,
              tried, tries);
    for (size_t i = 0; i < count; i++)
        if (blocks[i] != freed_before)
            fa_free(blocks[i]);
}

int main(int argc, char **argv)
{
    int rc = fa_test_rerun_secure("secure/store_before", NULL, argv);
    if (rc >= 0)
        return rc;
    (void)argc;
    stores_before(8, EIGHT_TRIES, false);
    for (size_t bin = 1; bin < FA_MEDIUM_BINS; bin++) {
        size_t c = fa_bin_size(bin);
        if (c > 32)
            stores_before(c - 32, 1, c > 4608);
        stores_before(c - 16, 1, c > 4608);
    }
    printf("secure/store_before: ok (%u children)\n", children);
    return 0;
}

/* ctest labels: unit */
/* A block freed into its class's current page (the queue's head) is the next one malloc of its
 * size hands back, and blocks freed in a row come back last freed first (record 104): a block
 * that waited behind the page's other free blocks came back out of the cache. The statistics
 * still count every malloc and free of them. */
#include <stdint.h>
#include <stdio.h>

#include "check.h"
#include "fitalloc-stats.h"
#include "fitalloc.h"

#define SIZE 48
#define COUNT 40

static uint64_t allocs_of_class(void)
{
    struct fa_stats s = {.size = sizeof s};
    CHECK_EQ(fa_stats_get(&s), 0);
    for (size_t i = 0; i < FA_STATS_CLASSES; i++)
        if (s.size_class[i].block_size == SIZE)
            return s.size_class[i].allocs;
    CHECK_MSG(0, "no class of %d bytes", SIZE);
    return 0;
}

int main(void)
{
    if (FA_TEST_ASAN) {
        /* The build for AddressSanitizer holds freed blocks back (FA_ASAN_POISON). */
        printf("engine/reuse_order: skipped under AddressSanitizer\n");
        return 0;
    }
    void *blocks[COUNT];
    for (int i = 0; i < COUNT; i++)
        CHECK((blocks[i] = fa_malloc(SIZE)) != NULL);
    uint64_t before = allocs_of_class();
    for (int i = 0; i < COUNT; i += 3) {
        void *p = blocks[i];
        fa_free(p);
        CHECK(fa_malloc(SIZE) == p);
    }
    fa_free(blocks[5]);
    fa_free(blocks[30]);
    fa_free(blocks[17]);
    CHECK(fa_malloc(SIZE) == blocks[17]);
    CHECK(fa_malloc(SIZE) == blocks[30]);
    CHECK(fa_malloc(SIZE) == blocks[5]);
    CHECK_EQ(allocs_of_class() - before, (uint64_t)(COUNT + 2) / 3 + 3);
    for (int i = 0; i < COUNT; i++)
        fa_free(blocks[i]);
    return 0;
}

/* ctest labels: reliability */
/* A buffer grown by realloc, 1 KiB at a time from 1 KiB to 120 KiB, moves through the classes
 * one after another, and each move empties the page at the head of the class it leaves. Those
 * pages must go back at once, not stay at hand as empty heads until the heap's looks for idle
 * heads (a purge delay or more later): fa_heap_visit lists none of them. A page where another
 * block still lives stays, with that block intact, and the buffer keeps its bytes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fitalloc-stats.h"
#include "fitalloc.h"

#define STEP 1024u
#define LAST (120u * 1024u)

struct pages {
    int empty;      /* pages of ours between STEP and LAST with no block in use */
    int with_other; /* the page of `other`, in use */
    uintptr_t other;
};

static void count(const struct fa_heap_area *area, void *arg)
{
    struct pages *p = arg;
    if (area->kind != FA_AREA_PAGE || !area->mine)
        return;
    if (area->used == 0 && area->block_size >= STEP && area->block_size <= LAST)
        p->empty++;
    uintptr_t first = (uintptr_t)area->start;
    if (p->other >= first && p->other < first + area->size)
        p->with_other += area->used > 0;
}

static unsigned char byte_at(size_t i)
{
    return (unsigned char)(i * 131u ^ i >> 9);
}

int main(void)
{
    /* A block of the class the buffer starts in, kept live: its page must stay. */
    unsigned char *other = fa_malloc(STEP);
    CHECK(other != NULL);
    memset(other, 0xa5, STEP);

    unsigned char *buffer = NULL;
    size_t size = 0;
    for (size_t n = STEP; n <= LAST; n += STEP) {
        buffer = fa_realloc(buffer, n);
        CHECK(buffer != NULL);
        for (size_t i = size; i < n; i++)
            buffer[i] = byte_at(i);
        size = n;
    }
    for (size_t i = 0; i < size; i++)
        CHECK_MSG(buffer[i] == byte_at(i), "byte %zu of the grown buffer lost", i);
    for (size_t i = 0; i < STEP; i++)
        CHECK_MSG(other[i] == 0xa5, "byte %zu of the other block lost", i);

    struct pages pages = {.other = (uintptr_t)other};
    CHECK(fa_heap_visit(count, &pages) >= 0);
    CHECK_MSG(pages.empty == 0, "%d empty pages left behind by the growth", pages.empty);
    CHECK_MSG(pages.with_other == 1, "the other block's page is not listed in use");

    fa_free(buffer);
    fa_free(other);
    printf("engine/realloc_left: ok\n");
    return 0;
}

/* The engine's pages at each sample point (engine_pages.h). */
#include "engine_pages.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "fitalloc-stats.h"

struct take {
    struct replay_array *pages;
    uint64_t op;
    bool full;
};

/* Runs under the engine's lock: replay_array_push maps its memory itself, never through the
 * engine. */
static void take_page(const struct fa_heap_area *area, void *arg)
{
    struct take *t = arg;
    if (area->kind != FA_AREA_PAGE || t->full)
        return;
    struct engine_page *p = replay_array_push(t->pages);
    if (!p) {
        t->full = true;
        return;
    }
    *p = (struct engine_page){
        .op = t->op,
        .start = (uint64_t)(uintptr_t)area->start,
        .block_size = (uint32_t)area->block_size,
        .capacity = (uint32_t)area->capacity,
        .used = (uint32_t)area->used,
        .shared = (uint32_t)area->shared,
        .returned = (uint32_t)area->returned,
    };
}

bool engine_pages_take(struct replay_array *pages, uint64_t op)
{
    pages->item_size = sizeof(struct engine_page);
    struct take t = {.pages = pages, .op = op};
    fa_heap_visit(take_page, &t);
    return !t.full;
}

bool engine_pages_write(const char *dir, const char *config, const struct replay_array *pages)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s.pages.csv", dir, config);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "fitalloc-replay: cannot write %s: %s\n", path, strerror(errno));
        return false;
    }
    fputs("op,start,block_size,capacity,used,shared,returned\n", f);
    const struct engine_page *p = pages->items;
    for (size_t i = 0; i < pages->count; i++)
        fprintf(f, "%llu,%llu,%u,%u,%u,%u,%u\n", (unsigned long long)p[i].op,
                (unsigned long long)p[i].start, p[i].block_size, p[i].capacity, p[i].used,
                p[i].shared, p[i].returned);
    bool ok = !ferror(f);
    ok &= fclose(f) == 0;
    if (!ok)
        fprintf(stderr, "fitalloc-replay: error writing %s\n", path);
    return ok;
}

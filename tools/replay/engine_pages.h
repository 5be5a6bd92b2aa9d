/* The fast engine's pages at each sample point of a replay, for `fitalloc map --engine`
 * (docs/command.md): CONFIG.pages.csv beside the series, one row per page in use at each
 * sample. */
#ifndef FA_REPLAY_ENGINE_PAGES_H
#define FA_REPLAY_ENGINE_PAGES_H

#include <stdbool.h>
#include <stdint.h>

#include "replay_mem.h"

struct engine_page {
    uint64_t op;    /* the sample's operation */
    uint64_t start; /* the page's first block */
    uint32_t block_size, capacity, used;
    uint32_t shared, returned; /* bytes (meshing): fitalloc-stats.h, struct fa_heap_area */
};

/* Append the engine's pages now, as sample `op` (fa_heap_visit); false when memory runs out. */
bool engine_pages_take(struct replay_array *pages, uint64_t op);
/* DIR/CONFIG.pages.csv; false (message printed) on a write error. */
bool engine_pages_write(const char *dir, const char *config, const struct replay_array *pages);

#endif

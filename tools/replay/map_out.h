/* The map files of --map-out DIR, for each lab configuration (docs/replay.md):
 *   DIR/<config>.blocks.csv  "alloc_op,free_op,offset,size": every block ever allocated
 *   DIR/<config>.series.csv  "op,heap_bytes,live_bytes,free_bytes,largest_free,free_blocks"
 * and for the engine its series and its pages (engine_pages.h).
 */
#ifndef FA_REPLAY_MAP_OUT_H
#define FA_REPLAY_MAP_OUT_H

#include <stdbool.h>

#include "replay.h"

/* Create dir and its missing parents; false (message printed) on failure. */
bool map_out_prepare(const char *dir);
/* Write both files of one configuration; false (message printed) on failure. */
bool map_out_write(const char *dir, const char *config, const struct replay_result *result);
/* The series alone. */
bool map_out_write_series(const char *dir, const char *config, const struct replay_result *result);

#endif

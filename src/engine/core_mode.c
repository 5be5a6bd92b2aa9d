/* The core's own mode (common/mode.h), in force unless process/ chooses another. */
#include "engine/engine.h"

/* The core's own mode: no blocks outside its segments, nothing more to do at a thread's end or
 * a fork (process/ does the core's part). */
const struct fa_mode_ops _fa_core_mode = {
    .malloc = _fa_core_malloc,
    .aligned = _fa_core_aligned,
    .large = _fa_large_alloc,
    .stats_print = _fa_stats_print,
};

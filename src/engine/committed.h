/* The engine's committed bytes (fitalloc-stats.h's `committed`) read alone, for a program
 * linked with the library's objects that samples it after every operation (tools/replay):
 * fa_stats_get gives it too, but walks every segment to fill in the rest. */
#ifndef FA_ENGINE_COMMITTED_H
#define FA_ENGINE_COMMITTED_H

#include <stdint.h>

uint64_t _fa_stats_committed(void);

#endif

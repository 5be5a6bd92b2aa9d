/* The engine's global counters (engine.h: FA_COUNTERS), and its committed bytes with their peak,
 * which every file counts in as it goes; stats.c reads them. */
#include "engine/committed.h"
#include "engine/engine.h"
#include "platform/atomic.h"

struct fa_counters _fa_counters;

void _fa_stats_commit(int64_t delta)
{
    uint64_t now = fa_atomic_add_relaxed(&_fa_counters.committed, (uint64_t)delta);
    uint64_t peak = fa_atomic_load_relaxed(&_fa_counters.peak_committed);
    while (delta > 0 && now > peak &&
           !fa_atomic_cas_weak_relaxed(&_fa_counters.peak_committed, &peak, now))
        ;
}

uint64_t _fa_stats_committed(void)
{
    return fa_atomic_load_relaxed(&_fa_counters.committed);
}

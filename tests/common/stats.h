/* fa_stats_get, checked: the engine's statistics now. Header-only, like check.h. */
#ifndef FITALLOC_TESTS_STATS_H
#define FITALLOC_TESTS_STATS_H

#include "check.h"
#include "fitalloc-stats.h"

static inline struct fa_stats fa_test_stats(void)
{
    struct fa_stats s;
    s.size = sizeof s;
    CHECK_EQ(fa_stats_get(&s), 0);
    return s;
}

#endif

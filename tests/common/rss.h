/* The test process's resident set size, read from /proc/self/statm.
 *
 * Header-only, like check.h. Unlike check.h it allocates: fopen() takes its FILE (and buffer)
 * through malloc, which fclose() gives back before the function returns.
 */
#ifndef FITALLOC_TESTS_RSS_H
#define FITALLOC_TESTS_RSS_H

#include <stdio.h>
#include <unistd.h>

#include "check.h"

/* Resident bytes of this process now (statm's second field times the page size). */
static inline unsigned long fa_test_rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, resident = 0;
    CHECK(f != NULL);
    CHECK_EQ(fscanf(f, "%lu %lu", &size, &resident), 2);
    fclose(f);
    return resident * (unsigned long)sysconf(_SC_PAGESIZE);
}

#endif /* FITALLOC_TESTS_RSS_H */

/* The test process's resident set size, read from /proc/self/statm, and the resident pages of
 * a range (mincore).
 *
 * Header-only, like check.h. Unlike check.h it allocates: fopen() takes its FILE (and buffer)
 * through malloc, which fclose() gives back before the function returns.
 */
#ifndef FITALLOC_TESTS_RSS_H
#define FITALLOC_TESTS_RSS_H

#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
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

/* Resident pages among the whole pages of [p, p + n). */
static inline size_t fa_test_resident_pages(const void *p, size_t n)
{
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t from = ((uintptr_t)p + page - 1) & ~(page - 1);
    uintptr_t to = ((uintptr_t)p + n) & ~(page - 1);
    unsigned char vec[512];
    size_t count = 0;
    for (uintptr_t at = from; at < to; at += sizeof vec * page) {
        size_t len = to - at < sizeof vec * page ? to - at : sizeof vec * page;
        CHECK_EQ(mincore((void *)at, len, vec), 0);
        for (size_t i = 0; i < len / page; i++)
            count += vec[i] & 1;
    }
    return count;
}

#endif /* FITALLOC_TESTS_RSS_H */

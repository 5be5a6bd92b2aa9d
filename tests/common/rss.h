/* The test process's resident set size, read from /proc/self/statm, and the resident pages of
 * a range (mincore); the skip of tests that need MADV_POPULATE_WRITE.
 *
 * Header-only, like check.h. Unlike check.h it allocates: fopen() takes its FILE (and buffer)
 * through malloc, which fclose() gives back before the function returns.
 */
#ifndef FITALLOC_TESTS_RSS_H
#define FITALLOC_TESTS_RSS_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

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

/* Exit 77 (skipped) on a kernel without MADV_POPULATE_WRITE (before Linux 5.14), where the
 * engine populates nothing. */
static inline void fa_test_require_populate(void)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    void *probe = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(probe != MAP_FAILED);
    if (madvise(probe, page, MADV_POPULATE_WRITE) != 0 && errno == EINVAL) {
        printf("no MADV_POPULATE_WRITE in this kernel: skipped\n");
        exit(77);
    }
    munmap(probe, page);
}

#endif /* FITALLOC_TESTS_RSS_H */

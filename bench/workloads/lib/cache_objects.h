/* The thread body of Hoard's cache tests (cache-thrash, cache-scratch): small objects, each
 * allocated, written and read many times, checked, and freed. (Needs _GNU_SOURCE, for
 * program_invocation_short_name.) */
#ifndef BENCH_CACHE_OBJECTS_H
#define BENCH_CACHE_OBJECTS_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* `objects` objects of `size` bytes one after the other, each byte written `repeat` times
 * (repeat >= 1); returns the sum of their last bytes' values. Inline, so that a constant size
 * gives the loop a constant bound, as the original's. */
static inline uint64_t cache_objects(long objects, size_t size, long repeat, uint64_t id)
{
    uint64_t sum = 0;
    for (long i = 0; i < objects; i++) {
        volatile unsigned char *obj = malloc(size);
        if (!obj) {
            fprintf(stderr, "%s: malloc failed\n", program_invocation_short_name);
            exit(1);
        }
        for (long r = 0; r < repeat; r++)
            for (size_t k = 0; k < size; k++)
                obj[k] = (unsigned char)(obj[k] * 0 + r + k + id);
        for (size_t k = 0; k < size; k++) {
            if (obj[k] != (unsigned char)(repeat - 1 + k + id)) {
                fprintf(stderr, "%s: CORRUPTION: object at %p byte %zu\n",
                        program_invocation_short_name, (void *)obj, k);
                exit(1);
            }
            sum += obj[k];
        }
        free((void *)obj);
    }
    return sum;
}

#endif

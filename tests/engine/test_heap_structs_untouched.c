/* ctest labels: unit */
/* Heap structures come four to a 64 KiB mapping, and a structure is written only when a
 * thread takes it: a single-threaded program keeps the memory of one (13 KiB, 4 OS pages),
 * not of the three it never uses. Linking all four onto the free pool when the mapping was
 * made wrote a page of each of them (12 KiB more in every process: docs/design.md,
 * "Start-up"). Run before any other thread allocates, so the main thread's heap is the first
 * structure of the first mapping. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "fitalloc.h"
#include "rss.h"

/* Internal, reachable because tests link the static library. */
typedef struct fa_heap_s fa_heap_t;
extern __thread fa_heap_t *_fa_heap_tls;

int main(void)
{
    void *p = fa_malloc(32);
    CHECK(p != NULL);
    memset(p, 1, 32);
    uintptr_t heap = (uintptr_t)_fa_heap_tls;
    CHECK_EQ(heap % 4096, 0); /* the first structure of its mapping */
    size_t untouched = 48 << 10;
    /* The structure spans the mapping's first 16 KiB; the rest is the three others'. */
    size_t resident = fa_test_resident_pages((void *)(heap + (16 << 10)), untouched);
    if (resident != 0) {
        fprintf(stderr, "%zu of the %zu pages of the unused heap structures are resident\n",
                resident, untouched / 4096);
        return 1;
    }
    fa_free(p);
    printf("ok: the unused heap structures of the first mapping are untouched\n");
    return 0;
}

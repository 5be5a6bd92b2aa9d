/* Small aligned allocations are sampled as malloc's are (issue 41): four sites, each 8 MiB in
 * blocks below a page, through aligned_alloc, posix_memalign, memalign and C++'s aligned
 * operator new, all live at the end (test_aligned.sh reads them back through google-pprof). */
#include <malloc.h>
#include <new>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BYTES ((size_t)8 << 20)

static void *must(void *p, size_t alignment)
{
    if (!p || (unsigned long)p % alignment) {
        fprintf(stderr, "aligned: %p is not a block aligned to %zu\n", p, alignment);
        exit(1);
    }
    memset(p, 1, 16);
    return p;
}

__attribute__((noinline)) static void by_aligned_alloc(void)
{
    for (size_t i = 0; i < BYTES / 64; i++)
        must(aligned_alloc(64, 64), 64);
}

__attribute__((noinline)) static void by_posix_memalign(void)
{
    for (size_t i = 0; i < BYTES / 256; i++) {
        void *p = NULL;
        if (posix_memalign(&p, 256, 256))
            p = NULL;
        must(p, 256);
    }
}

__attribute__((noinline)) static void by_memalign(void)
{
    for (size_t i = 0; i < BYTES / 1024; i++)
        must(memalign(1024, 1024), 1024);
}

struct alignas(128) Line {
    char bytes[128];
};

__attribute__((noinline)) static void by_aligned_new(void)
{
    for (size_t i = 0; i < BYTES / sizeof(Line); i++)
        must(new Line, alignof(Line));
}

int main()
{
    by_aligned_alloc();
    by_posix_memalign();
    by_memalign();
    by_aligned_new();
    return 0;
}

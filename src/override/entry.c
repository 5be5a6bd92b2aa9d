/* The fa_* allocation API (include/fitalloc.h): where a call the program makes enters
 * fitalloc, and, while tracing, is recorded (FA_TRACED, trace/record.h). The engine's functions
 * below record nothing. malloc and free inline the fast paths; a traced process's pages are all
 * slow, so its mallocs and frees reach the engine's slow paths, which record them there.
 *
 * In a build for debugging tools (FA_TOOLS) these are renamed, and override/tools.c exports
 * wrappers under the public names that tell the tool about each block. */
#include <errno.h>
#include <stdint.h>

#include "fitalloc-trace.h"
#include "fitalloc.h"
#include "engine/fastpath.h"

#ifdef FA_TOOLS
#define FA_ENTRY(name) _fa_untracked_##name
#define FA_ENTRY_API
#else
#define FA_ENTRY(name) name
#define FA_ENTRY_API FA_API
#endif

FA_ENTRY_API void *FA_ENTRY(fa_malloc)(size_t n)
{
    return fa_malloc_inline(n);
}

FA_ENTRY_API void FA_ENTRY(fa_free)(void *p)
{
    fa_free_inline(p, "free", 0);
}

FA_ENTRY_API void FA_ENTRY(fa_free_sized)(void *p, size_t n)
{
    fa_free_inline(p, "free_sized", n);
}

FA_ENTRY_API void FA_ENTRY(fa_free_aligned_sized)(void *p, size_t alignment, size_t n)
{
    (void)alignment;
    fa_free_inline(p, "free_aligned_sized", n);
}

/* The bytes a calloc asks for; SIZE_MAX in the trace when the product does not fit (the call
 * fails). */
static size_t product(size_t count, size_t size)
{
    size_t total;
    return __builtin_mul_overflow(count, size, &total) ? SIZE_MAX : total;
}

FA_ENTRY_API void *FA_ENTRY(fa_calloc)(size_t count, size_t size)
{
    return FA_TRACED(void *, _fa_calloc(count, size), FA_TRACE_CALLOC, product(count, size), 0,
                     NULL, traced);
}

FA_ENTRY_API void *FA_ENTRY(fa_realloc)(void *p, size_t n)
{
    return FA_TRACED(void *, _fa_realloc(p, n), FA_TRACE_REALLOC, n, 0, p, traced);
}

static void *out_of_memory(void)
{
    errno = ENOMEM;
    return NULL;
}

FA_API void *fa_reallocarray(void *p, size_t count, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(count, size, &total))
        return FA_TRACED(void *, out_of_memory(), FA_TRACE_REALLOC, SIZE_MAX, 0, p, NULL);
    return fa_realloc(p, total); /* which records the call */
}

/* The aligned forms record the alignment they asked for. */
FA_ENTRY_API void *FA_ENTRY(fa_aligned_alloc)(size_t alignment, size_t n)
{
    return FA_TRACED(void *, _fa_aligned_alloc(alignment, n), FA_TRACE_ALIGNED, n, alignment, NULL,
                     traced);
}

FA_ENTRY_API int FA_ENTRY(fa_posix_memalign)(void **out, size_t alignment, size_t n)
{
    return FA_TRACED(int, _fa_posix_memalign(out, alignment, n), FA_TRACE_ALIGNED, n, alignment,
                     NULL, traced ? NULL : *out);
}

FA_ENTRY_API void *FA_ENTRY(fa_memalign)(size_t alignment, size_t n)
{
    return FA_TRACED(void *, _fa_memalign(alignment, n), FA_TRACE_ALIGNED, n, alignment, NULL,
                     traced);
}

FA_ENTRY_API void *FA_ENTRY(fa_valloc)(size_t n)
{
    return FA_TRACED(void *, _fa_malloc_aligned(FA_OS_PAGE, n), FA_TRACE_ALIGNED, n, FA_OS_PAGE,
                     NULL, traced);
}

FA_ENTRY_API void *FA_ENTRY(fa_pvalloc)(size_t n)
{
    return FA_TRACED(void *, _fa_pvalloc(n), FA_TRACE_ALIGNED, n, FA_OS_PAGE, NULL, traced);
}

FA_API size_t fa_malloc_usable_size(const void *p)
{
    return fa_usable_size_inline(p);
}

/* Aligned allocation: aligned_alloc, posix_memalign, memalign, valloc, pvalloc.
 *
 * No block ever starts inside another: a small aligned request is served by the first size
 * class whose block size is a multiple of the alignment (a power of two always is one), and
 * pages start at multiples of their largest block size (types.h), so every block of that class
 * is aligned. free() therefore needs no special case. Larger requests get a large block placed
 * at the alignment.
 */
#include <errno.h>
#include <stdint.h>

#include "fitalloc-trace.h"
#include "fitalloc.h"
#include "engine/fastpath.h"
#include "engine/size_class.h"

static bool is_power_of_two(size_t x)
{
    return x && !(x & (x - 1));
}

void *_fa_malloc_aligned(size_t alignment, size_t n)
{
    if (alignment <= FA_ALIGN)
        return fa_malloc_inline(n);
    if (n > PTRDIFF_MAX) {
        errno = ENOMEM;
        return NULL;
    }
    if (_fa_mode) {
        _fa_thread_watch_exit(); /* the mode's thread state goes back when the thread ends */
        return _fa_mode->aligned(alignment, n);
    }
    if (_fa_secure)
        return _fa_secure_alloc(n, alignment);
    size_t want = n > alignment ? n : alignment;
    if (want <= FA_MEDIUM_MAX) {
        size_t bin = fa_bin_of(want);
        while (fa_bin_size(bin) % alignment)
            bin++;
        if (fa_bin_size(bin) <= FA_MEDIUM_MAX)
            return fa_malloc_inline(fa_bin_size(bin));
    }
    return _fa_large_alloc(n, alignment, false);
}

/* While tracing, each entry point records its call with the alignment it asked for. */
static void *traced(void *p, size_t alignment, size_t n)
{
    _fa_trace_record(FA_TRACE_ALIGNED, n, alignment, NULL, p);
    _fa_trace_leave();
    return p;
}

static void *aligned_alloc_untraced(size_t alignment, size_t n)
{
    if (!is_power_of_two(alignment)) {
        errno = EINVAL;
        return NULL;
    }
    return _fa_malloc_aligned(alignment, n);
}

FA_ENTRY_API void *FA_ENTRY(fa_aligned_alloc)(size_t alignment, size_t n)
{
    if (fa_unlikely(_fa_trace_on) && _fa_trace_enter())
        return traced(aligned_alloc_untraced(alignment, n), alignment, n);
    return aligned_alloc_untraced(alignment, n);
}

static int posix_memalign_untraced(void **out, size_t alignment, size_t n)
{
    if (!is_power_of_two(alignment) || alignment % sizeof(void *))
        return EINVAL;
    int saved = errno;
    void *p = _fa_malloc_aligned(alignment, n);
    errno = saved;
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

FA_ENTRY_API int FA_ENTRY(fa_posix_memalign)(void **out, size_t alignment, size_t n)
{
    if (fa_unlikely(_fa_trace_on) && _fa_trace_enter()) {
        int result = posix_memalign_untraced(out, alignment, n);
        traced(result ? NULL : *out, alignment, n);
        return result;
    }
    return posix_memalign_untraced(out, alignment, n);
}

static void *memalign_untraced(size_t alignment, size_t n)
{
    /* glibc rounds an alignment that is not a power of two up to the next one. */
    if (alignment > ((size_t)1 << 62)) {
        errno = EINVAL;
        return NULL;
    }
    if (!is_power_of_two(alignment))
        alignment = alignment ? (size_t)1 << (64 - __builtin_clzl(alignment)) : 1;
    return _fa_malloc_aligned(alignment, n);
}

FA_ENTRY_API void *FA_ENTRY(fa_memalign)(size_t alignment, size_t n)
{
    if (fa_unlikely(_fa_trace_on) && _fa_trace_enter())
        return traced(memalign_untraced(alignment, n), alignment, n);
    return memalign_untraced(alignment, n);
}

FA_ENTRY_API void *FA_ENTRY(fa_valloc)(size_t n)
{
    if (fa_unlikely(_fa_trace_on) && _fa_trace_enter())
        return traced(_fa_malloc_aligned(FA_OS_PAGE, n), FA_OS_PAGE, n);
    return _fa_malloc_aligned(FA_OS_PAGE, n);
}

static void *pvalloc_untraced(size_t n)
{
    if (n > PTRDIFF_MAX) {
        errno = ENOMEM;
        return NULL;
    }
    size_t rounded = n ? fa_align_up(n, FA_OS_PAGE) : FA_OS_PAGE;
    return _fa_malloc_aligned(FA_OS_PAGE, rounded);
}

FA_ENTRY_API void *FA_ENTRY(fa_pvalloc)(size_t n)
{
    if (fa_unlikely(_fa_trace_on) && _fa_trace_enter())
        return traced(pvalloc_untraced(n), FA_OS_PAGE, n);
    return pvalloc_untraced(n);
}

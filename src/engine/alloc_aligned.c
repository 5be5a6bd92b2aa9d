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
    return _fa_mode->aligned(alignment, n);
}

void *_fa_core_aligned(size_t alignment, size_t n)
{
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

void *_fa_aligned_alloc(size_t alignment, size_t n)
{
    if (!is_power_of_two(alignment)) {
        errno = EINVAL;
        return NULL;
    }
    return _fa_malloc_aligned(alignment, n);
}

int _fa_posix_memalign(void **out, size_t alignment, size_t n)
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

void *_fa_memalign(size_t alignment, size_t n)
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

void *_fa_pvalloc(size_t n)
{
    if (n > PTRDIFF_MAX) {
        errno = ENOMEM;
        return NULL;
    }
    size_t rounded = n ? fa_align_up(n, FA_OS_PAGE) : FA_OS_PAGE;
    return _fa_malloc_aligned(FA_OS_PAGE, rounded);
}

/* The C allocation API under its standard names, for LD_PRELOAD and for programs linked with
 * libfitalloc. Only thin entry points: the semantics live in the fa_* functions. malloc and
 * free inline the fast paths so that interposed calls cost no extra jump. In the secure
 * library each says where the program called it (FA_SECURE_CALLER, engine/secure/secure.h). */
#include <stddef.h>

#include "engine/fastpath.h"
#include "engine/secure/secure.h"
#include "fitalloc.h"

FA_API void *malloc(size_t n)
{
    FA_SECURE_CALLER();
    return fa_entry_malloc(n);
}

FA_API void free(void *p)
{
    FA_SECURE_CALLER();
    fa_entry_free(p, "free", 0);
}

FA_API void *calloc(size_t count, size_t size)
{
    FA_SECURE_CALLER();
    return fa_calloc(count, size);
}

FA_API void *realloc(void *p, size_t n)
{
    FA_SECURE_CALLER();
    return fa_realloc(p, n);
}

FA_API void *reallocarray(void *p, size_t count, size_t size)
{
    FA_SECURE_CALLER();
    return fa_reallocarray(p, count, size);
}

FA_API void *aligned_alloc(size_t alignment, size_t n)
{
    FA_SECURE_CALLER();
    return fa_aligned_alloc(alignment, n);
}

FA_API int posix_memalign(void **out, size_t alignment, size_t n)
{
    FA_SECURE_CALLER();
    return fa_posix_memalign(out, alignment, n);
}

FA_API void *memalign(size_t alignment, size_t n)
{
    FA_SECURE_CALLER();
    return fa_memalign(alignment, n);
}

FA_API void *valloc(size_t n)
{
    FA_SECURE_CALLER();
    return fa_valloc(n);
}

FA_API void *pvalloc(size_t n)
{
    FA_SECURE_CALLER();
    return fa_pvalloc(n);
}

FA_API size_t malloc_usable_size(void *p)
{
    FA_SECURE_CALLER();
    return fa_entry_usable_size(p);
}

FA_API void free_sized(void *p, size_t n)
{
    FA_SECURE_CALLER();
    fa_entry_free(p, "free_sized", n);
}

FA_API void free_aligned_sized(void *p, size_t alignment, size_t n)
{
    FA_SECURE_CALLER();
    (void)alignment;
    fa_entry_free(p, "free_aligned_sized", n);
}

/* glibc's internal names, which some programs and libraries call directly. */
FA_API void *__libc_malloc(size_t n) __attribute__((alias("malloc")));
FA_API void __libc_free(void *p) __attribute__((alias("free")));
FA_API void *__libc_calloc(size_t count, size_t size) __attribute__((alias("calloc")));
FA_API void *__libc_realloc(void *p, size_t n) __attribute__((alias("realloc")));
FA_API void *__libc_memalign(size_t alignment, size_t n) __attribute__((alias("memalign")));
FA_API void *__libc_valloc(size_t n) __attribute__((alias("valloc")));
FA_API void *__libc_pvalloc(size_t n) __attribute__((alias("pvalloc")));

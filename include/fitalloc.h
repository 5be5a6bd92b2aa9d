/* fitalloc — a fast, drop-in memory allocator for Linux.
 *
 * This header is the contract. Every function below behaves like its C
 * library namesake (same arguments, same errno values); the fa_ prefix lets a
 * program or a test call fitalloc directly without interposing malloc.
 * When libfitalloc is preloaded or linked, the unprefixed names (malloc, free,
 * ...) are the same functions.
 */
#ifndef FITALLOC_H
#define FITALLOC_H

#include <stddef.h>

#include "fitalloc-stats.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FITALLOC_VERSION_MAJOR 0
#define FITALLOC_VERSION_MINOR 1
#define FITALLOC_VERSION_PATCH 0

/* malloc: n bytes, 16-byte aligned; n == 0 gives a unique pointer; NULL+ENOMEM on failure. */
void *fa_malloc(size_t n);
/* free: release p; NULL is ignored; a pointer fitalloc never returned aborts when detectable. */
void fa_free(void *p);
/* calloc: zeroed count*size bytes; overflow gives NULL with ENOMEM. */
void *fa_calloc(size_t count, size_t size);
/* realloc: resize keeping contents; realloc(NULL,n)=malloc(n); realloc(p,0) frees p, returns NULL. */
void *fa_realloc(void *p, size_t n);
/* reallocarray: realloc(p, count*size) with overflow check (NULL+ENOMEM, p untouched). */
void *fa_reallocarray(void *p, size_t count, size_t size);
/* aligned_alloc: alignment must be a power of two, else NULL with EINVAL. */
void *fa_aligned_alloc(size_t alignment, size_t n);
/* posix_memalign: returns EINVAL for a bad alignment, ENOMEM when out of memory; errno untouched. */
int fa_posix_memalign(void **out, size_t alignment, size_t n);
/* memalign: like aligned_alloc, but a non-power-of-two alignment is rounded up (glibc behaviour). */
void *fa_memalign(size_t alignment, size_t n);
/* valloc: page-aligned block of n bytes. */
void *fa_valloc(size_t n);
/* pvalloc: page-aligned block of n rounded up to a whole page (one page for n == 0). */
void *fa_pvalloc(size_t n);
/* malloc_usable_size: bytes that may be written at p (>= the size asked); 0 for NULL. */
size_t fa_malloc_usable_size(const void *p);
/* free_sized (C23): free p allocated with n bytes; n is not trusted. */
void fa_free_sized(void *p, size_t n);
/* free_aligned_sized (C23): free p from aligned_alloc(alignment, n). */
void fa_free_aligned_sized(void *p, size_t alignment, size_t n);

/* Return free memory (empty pages, cached segments and large blocks) to the OS now; the
 * calling thread takes back the blocks other threads freed into its pages, its empty pages kept
 * at hand for its next mallocs go too, and heaps parked by ended threads are given up first, so
 * that their free memory goes back as well. */
void fa_collect(void);
/* Print the statistics to stderr in the FITALLOC_STATS=1 format. */
void fa_stats_print(void);
/* The value of option `name` (e.g. "purge_delay"), as read from FITALLOC_*; -1 if unknown. */
long long fa_option_get(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* FITALLOC_H */

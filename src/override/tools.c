/* Builds for debugging tools (FA_TOOLS): the allocation entry points under their public names,
 * telling the tool about every block the program holds, so that the tool reports the
 * program's bugs inside fitalloc's memory as it would inside its own allocator's.
 *
 *   -DFITALLOC_VALGRIND=ON  valgrind memcheck client requests: a block is malloc-like from
 *                           allocation to free (leaks, use after free, uninitialised reads),
 *                           the room after its requested size is no-access (overflows);
 *   -DFITALLOC_ASAN=ON      for a program built with -fsanitize=address that uses the fa_* API:
 *                           the same through ASan's manual poisoning interface.
 *
 * fitalloc's own reads and writes of free blocks happen with valgrind's error reporting off
 * (and the library is not ASan-instrumented). realloc always moves the block here, so that the
 * tool sees one block end and another begin.
 */
#ifdef FA_TOOLS
#include <errno.h>
#include <string.h>

#include "fitalloc.h"
#include "engine/engine.h"

#if defined(FA_VALGRIND)
#include <valgrind/memcheck.h>

#define QUIET_BEGIN() VALGRIND_DISABLE_ERROR_REPORTING
#define QUIET_END() VALGRIND_ENABLE_ERROR_REPORTING

static void held(void *p, size_t n, size_t room, bool zeroed)
{
    VALGRIND_MAKE_MEM_NOACCESS((char *)p + n, room - n);
    VALGRIND_MALLOCLIKE_BLOCK(p, n, 0, zeroed);
}

static void released(void *p, size_t room)
{
    (void)room;
    VALGRIND_FREELIKE_BLOCK(p, 0);
}

/* The bytes of a held block worth copying: memcheck keeps the rest undefined by itself. */
static size_t held_size(const void *p, size_t room)
{
    (void)p;
    return room;
}

#else /* FA_ASAN_POISON */
/* Weak: the program that links us brings the ASan runtime, or there is nothing to tell. */
void __asan_poison_memory_region(const volatile void *addr, size_t size) __attribute__((weak));
void __asan_unpoison_memory_region(const volatile void *addr, size_t size) __attribute__((weak));
void *__asan_region_is_poisoned(void *addr, size_t size) __attribute__((weak));

#define QUIET_BEGIN() ((void)0)
#define QUIET_END() ((void)0)

static void held(void *p, size_t n, size_t room, bool zeroed)
{
    (void)zeroed;
    if (__asan_unpoison_memory_region && __asan_poison_memory_region) {
        __asan_unpoison_memory_region(p, n);
        __asan_poison_memory_region((char *)p + n, room - n);
    }
}

static void released(void *p, size_t room)
{
    if (__asan_poison_memory_region)
        __asan_poison_memory_region(p, room);
}

static size_t held_size(const void *p, size_t room)
{
    char *poisoned = __asan_region_is_poisoned ? __asan_region_is_poisoned((void *)p, room) : NULL;
    return poisoned ? (size_t)(poisoned - (const char *)p) : room;
}
#endif

void *_fa_untracked_fa_malloc(size_t n);
void *_fa_untracked_fa_calloc(size_t count, size_t size);
void _fa_untracked_fa_free(void *p);
void _fa_untracked_fa_free_sized(void *p, size_t n);
void _fa_untracked_fa_free_aligned_sized(void *p, size_t alignment, size_t n);
void *_fa_untracked_fa_aligned_alloc(size_t alignment, size_t n);
int _fa_untracked_fa_posix_memalign(void **out, size_t alignment, size_t n);
void *_fa_untracked_fa_memalign(size_t alignment, size_t n);
void *_fa_untracked_fa_valloc(size_t n);
void *_fa_untracked_fa_pvalloc(size_t n);

static size_t room_of(const void *p)
{
    QUIET_BEGIN();
    size_t room = fa_malloc_usable_size(p);
    QUIET_END();
    return room;
}

/* A block the program now holds: n bytes asked for. */
static void *track(void *p, size_t n, bool zeroed)
{
    if (p)
        held(p, n, room_of(p), zeroed);
    return p;
}

/* Runs `call` with the tool quiet, then tracks what it returned. */
#define TRACKED(call, n, zeroed)                                                                   \
    do {                                                                                           \
        QUIET_BEGIN();                                                                             \
        void *tracked_ = (call);                                                                   \
        QUIET_END();                                                                               \
        return track(tracked_, (n), (zeroed));                                                     \
    } while (0)

FA_API void *fa_malloc(size_t n)
{
    TRACKED(_fa_untracked_fa_malloc(n), n, false);
}

FA_API void *fa_calloc(size_t count, size_t size)
{
    TRACKED(_fa_untracked_fa_calloc(count, size), count * size, true);
}

FA_API void *fa_aligned_alloc(size_t alignment, size_t n)
{
    TRACKED(_fa_untracked_fa_aligned_alloc(alignment, n), n, false);
}

FA_API void *fa_memalign(size_t alignment, size_t n)
{
    TRACKED(_fa_untracked_fa_memalign(alignment, n), n, false);
}

FA_API void *fa_valloc(size_t n)
{
    TRACKED(_fa_untracked_fa_valloc(n), n, false);
}

FA_API void *fa_pvalloc(size_t n)
{
    TRACKED(_fa_untracked_fa_pvalloc(n), n, false);
}

FA_API int fa_posix_memalign(void **out, size_t alignment, size_t n)
{
    QUIET_BEGIN();
    int result = _fa_untracked_fa_posix_memalign(out, alignment, n);
    QUIET_END();
    if (result == 0)
        track(*out, n, false);
    return result;
}

/* Free: the tool learns first (so that it reports a bad free itself), then fitalloc checks. */
#define RELEASED(p, call)                                                                          \
    do {                                                                                           \
        if (p)                                                                                     \
            released((p), room_of(p));                                                             \
        QUIET_BEGIN();                                                                             \
        call;                                                                                      \
        QUIET_END();                                                                               \
    } while (0)

FA_API void fa_free(void *p)
{
    RELEASED(p, _fa_untracked_fa_free(p));
}

FA_API void fa_free_sized(void *p, size_t n)
{
    RELEASED(p, _fa_untracked_fa_free_sized(p, n));
}

FA_API void fa_free_aligned_sized(void *p, size_t alignment, size_t n)
{
    RELEASED(p, _fa_untracked_fa_free_aligned_sized(p, alignment, n));
}

FA_API void *fa_realloc(void *p, size_t n)
{
    if (!p)
        return fa_malloc(n);
    if (n == 0) {
        fa_free(p); /* glibc's behaviour, as in the untracked realloc */
        return NULL;
    }
    size_t old = held_size(p, room_of(p));
    void *q = fa_malloc(n);
    if (!q)
        return NULL;
    QUIET_BEGIN();
    memcpy(q, p, n < old ? n : old);
    QUIET_END();
    fa_free(p);
    return q;
}
#else
typedef int fa_no_debugging_tools; /* an empty file is not valid C */
#endif

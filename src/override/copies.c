/* memcpy, memmove, memset and their _FORTIFY_SOURCE forms (__memcpy_chk, ...), so that secure
 * mode can stop a copy into a fitalloc block that runs past the block's end, as snmalloc's
 * checked build does: `fitalloc: memcpy(): 32 bytes past the end of the 8-byte block at 0x…`.
 * Only in libfitalloc.so (CMakeLists.txt says why).
 *
 * Each function is one indirect jump: to the C library's own function (for a __*_chk form, to
 * the same check as the C library's, then its plain function), or, in secure mode, to the
 * checked one here, chosen by our constructor. Not a GNU indirect function (ifunc), which would
 * cost not even that jump: ld.so calls the resolver of an ifunc when it binds a symbol to
 * it, also while relocating a library linked with -z now (most of Debian's) before ours, and
 * then prints "Relink `lib' with `libfitalloc.so' for IFUNC symbol `memcpy'" on the program's
 * stderr. Until the constructor has run (other libraries' constructors may copy first), byte
 * loops stand in. Copies fitalloc makes itself (realloc's, secure mode's fills and canaries)
 * come here too, and are not checked: they are known to stay in their blocks. */
#include <stddef.h>
#include <stdint.h>

#include "engine/secure/secure.h"
#include "platform/compiler.h"
#include "platform/os.h"

typedef void *copy_fn(void *dst, const void *src, size_t n);
typedef void *set_fn(void *dst, int c, size_t n);
typedef void *copy_chk_fn(void *dst, const void *src, size_t n, size_t room);
typedef void *set_chk_fn(void *dst, int c, size_t n, size_t room);

struct copies {
    copy_fn *memcpy;
    copy_fn *memmove;
    set_fn *memset;
    copy_chk_fn *memcpy_chk;
    copy_chk_fn *memmove_chk;
    set_chk_fn *memset_chk;
};

/* The byte loops: the empty asm keeps the compiler from turning them into calls to memcpy and
 * memset, which would come back here. */
static void *early_memmove(void *dst, const void *src, size_t n)
{
    char *d = dst;
    const char *s = src;
    if (d <= s || d >= s + n) {
        for (size_t i = 0; i < n; i++) {
            d[i] = s[i];
            __asm__ volatile("" ::: "memory");
        }
    } else {
        for (size_t i = n; i-- > 0;) {
            d[i] = s[i];
            __asm__ volatile("" ::: "memory");
        }
    }
    return dst;
}

static void *early_memset(void *dst, int c, size_t n)
{
    char *d = dst;
    for (size_t i = 0; i < n; i++) {
        d[i] = (char)c;
        __asm__ volatile("" ::: "memory");
    }
    return dst;
}

static void *early_memmove_chk(void *dst, const void *src, size_t n, size_t room)
{
    if (room < n)
        _fa_os_copy_overflow();
    return early_memmove(dst, src, n);
}

static void *early_memset_chk(void *dst, int c, size_t n, size_t room)
{
    if (room < n)
        _fa_os_copy_overflow();
    return early_memset(dst, c, n);
}

#define EARLY                                                                                      \
    {                                                                                              \
        early_memmove, early_memmove, early_memset, early_memmove_chk, early_memmove_chk,          \
            early_memset_chk                                                                       \
    }
/* The C library's functions (the __*_chk forms: ours over its plain ones), and where the
 * exported ones jump. */
static struct copies libc = EARLY, target = EARLY;
/* fitalloc's own code: copies called from there are not checked. */
static uintptr_t own_start, own_end;

static void check(const char *caller, const void *dst, size_t n, const void *from)
{
    if ((uintptr_t)from - own_start >= own_end - own_start)
        _fa_copy_check(caller, dst, n);
}

static void *checked_memcpy(void *dst, const void *src, size_t n)
{
    check("memcpy", dst, n, __builtin_return_address(0));
    return libc.memcpy(dst, src, n);
}

static void *checked_memmove(void *dst, const void *src, size_t n)
{
    check("memmove", dst, n, __builtin_return_address(0));
    return libc.memmove(dst, src, n);
}

static void *checked_memset(void *dst, int c, size_t n)
{
    check("memset", dst, n, __builtin_return_address(0));
    return libc.memset(dst, c, n);
}

/* The _FORTIFY_SOURCE forms over the C library's plain functions, with the C library's own
 * check. Not looked up there: looking up an indirect function runs its resolver, and those of
 * the __*_chk forms sit in a part of the C library's code that a program which never calls them
 * would not have resident (docs/design.md, "Start-up"). */
static void *fortified_memcpy(void *dst, const void *src, size_t n, size_t room)
{
    if (fa_unlikely(room < n))
        _fa_os_copy_overflow();
    return libc.memcpy(dst, src, n);
}

static void *fortified_memmove(void *dst, const void *src, size_t n, size_t room)
{
    if (fa_unlikely(room < n))
        _fa_os_copy_overflow();
    return libc.memmove(dst, src, n);
}

static void *fortified_memset(void *dst, int c, size_t n, size_t room)
{
    if (fa_unlikely(room < n))
        _fa_os_copy_overflow();
    return libc.memset(dst, c, n);
}

static void *checked_memcpy_chk(void *dst, const void *src, size_t n, size_t room)
{
    check("memcpy", dst, n, __builtin_return_address(0));
    return fortified_memcpy(dst, src, n, room);
}

static void *checked_memmove_chk(void *dst, const void *src, size_t n, size_t room)
{
    check("memmove", dst, n, __builtin_return_address(0));
    return fortified_memmove(dst, src, n, room);
}

static void *checked_memset_chk(void *dst, int c, size_t n, size_t room)
{
    check("memset", dst, n, __builtin_return_address(0));
    return fortified_memset(dst, c, n, room);
}

static const struct copies checked = {checked_memcpy,     checked_memmove,     checked_memset,
                                      checked_memcpy_chk, checked_memmove_chk, checked_memset_chk};

/* The C library's functions, all of them or none (then the byte loops stay). */
static bool find_libc(struct copies *c)
{
    static const char names[3][8] FA_STARTUP_CONST = {"memcpy", "memmove", "memset"};
    c->memcpy = (copy_fn *)_fa_os_next_symbol(names[0]);
    c->memmove = (copy_fn *)_fa_os_next_symbol(names[1]);
    c->memset = (set_fn *)_fa_os_next_symbol(names[2]);
    c->memcpy_chk = fortified_memcpy;
    c->memmove_chk = fortified_memmove;
    c->memset_chk = fortified_memset;
    return c->memcpy && c->memmove && c->memset;
}

__attribute__((constructor)) static void copies_start(void)
{
    _fa_process_init(); /* the options: is it secure mode? */
    struct copies found;
    if (!find_libc(&found))
        return;
    libc = found;
    if (_fa_secure && _fa_os_code_range((const void *)copies_start, &own_start, &own_end))
        target = checked;
    else
        target = libc;
}

FA_API void *memcpy(void *dst, const void *src, size_t n)
{
    return target.memcpy(dst, src, n);
}

FA_API void *memmove(void *dst, const void *src, size_t n)
{
    return target.memmove(dst, src, n);
}

FA_API void *memset(void *dst, int c, size_t n)
{
    return target.memset(dst, c, n);
}

FA_API void *__memcpy_chk(void *dst, const void *src, size_t n, size_t room)
{
    return target.memcpy_chk(dst, src, n, room);
}

FA_API void *__memmove_chk(void *dst, const void *src, size_t n, size_t room)
{
    return target.memmove_chk(dst, src, n, room);
}

FA_API void *__memset_chk(void *dst, int c, size_t n, size_t room)
{
    return target.memset_chk(dst, c, n, room);
}

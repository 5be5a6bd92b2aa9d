/* What fitalloc asks of the compiler beyond C11: branch hints, symbol visibility, cold code. */
#ifndef FA_COMPILER_H
#define FA_COMPILER_H

#include <stdint.h>

#define fa_likely(x) __builtin_expect(!!(x), 1)
#define fa_unlikely(x) __builtin_expect(!!(x), 0)
/* Exported from libfitalloc.so (everything else is hidden: -fvisibility=hidden). */
#define FA_API __attribute__((visibility("default")))
#define FA_COLD __attribute__((noinline, cold))
/* A constant that every process reads (at start, or on the default mode's paths): kept with the
 * constants the loader relocates (.data.rel.ro), whose page it writes anyway, not in .rodata,
 * whose segment, .eh_frame's too, a single read would fault in whole (docs/design.md,
 * "Start-up"). */
#define FA_STARTUP_CONST __attribute__((section(".data.rel.ro")))
/* A large zero-initialised array (a table of the whole address space, or one that only another
 * mode uses): linked after all the other zero-initialised variables (cmake/hot-text.cmake), so
 * that those, which every process writes, share a page or two and not one each between the
 * arrays. */
#define FA_BSS_APART __attribute__((section(".bss.fa_apart")))
/* A zero-initialised variable that every process writes at start: linked first
 * (cmake/hot-text.cmake), into the page the loader writes anyway where .data ends. */
#define FA_BSS_FIRST __attribute__((section(".bss.fa_first")))

/* x rounded up to a multiple of a, a power of two. */
static inline uintptr_t fa_align_up(uintptr_t x, uintptr_t a)
{
    return (x + a - 1) & ~(a - 1);
}

#endif

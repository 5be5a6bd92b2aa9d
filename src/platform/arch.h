/* The processor: the little fitalloc asks of it beyond C, per architecture (x86-64, aarch64). */
#ifndef FA_ARCH_H
#define FA_ARCH_H

#include <stdint.h>

/* The widest user addresses fitalloc handles: 2^FA_ADDRESS_BITS sizes the engine's segment map,
 * a static table its free path indexes without a bounds check. x86-64 Linux: 47 (4-level
 * paging; 5-level kernels hand out higher addresses only to mmap hints that ask for them).
 * aarch64 Linux: 48 (the usual 48-bit VA, or less; 52-bit kernels keep to 48 bits unless a hint
 * asks for more). The width is not assumed: process start reads the kernel's
 * (_fa_os_address_bits) and refuses to run, with a message, on a wider one. */
#if defined(__x86_64__)
#define FA_ADDRESS_BITS 47
#elif defined(__aarch64__)
#define FA_ADDRESS_BITS 48
#else
#error "fitalloc: unknown architecture (x86-64 and aarch64 are supported)"
#endif

/* A word per thread that one instruction reads and that no other live thread has (x86-64:
 * %fs:0, which the TLS ABI makes point to itself; aarch64: tpidr_el0). The C library gives an
 * ended thread's value to a new thread. */
static inline uintptr_t fa_thread_pointer(void)
{
    return (uintptr_t)__builtin_thread_pointer();
}

/* Inside a spin loop: let the other hardware thread of the core run, and save power. */
static inline void fa_cpu_relax(void)
{
#if defined(__x86_64__)
    __builtin_ia32_pause();
#else
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

#endif

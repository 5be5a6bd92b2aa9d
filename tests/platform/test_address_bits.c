/* ctest labels: unit */
/* The address-space width process start reads (platform/os.h _fa_os_address_bits) covers every
 * address the process has: its stack, its heap, a fresh mapping made through fitalloc, and a
 * thread's stack; and it is within what the segment map covers (platform/arch.h), or fitalloc
 * would refuse to start. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "platform/arch.h"
#include "platform/os.h"

static unsigned bits_of(const void *p)
{
    return 64 - (unsigned)__builtin_clzll((uintptr_t)p);
}

static void *thread_stack(void *arg)
{
    int local;
    *(unsigned *)arg = bits_of(&local);
    return NULL;
}

int main(void)
{
    unsigned width = _fa_os_address_bits();
    CHECK(width >= 32 && width <= FA_ADDRESS_BITS);
    int local;
    CHECK(bits_of(&local) <= width);
    void *small = malloc(16), *large = malloc(64 << 20);
    CHECK(small && large);
    CHECK(bits_of(small) <= width && bits_of(large) <= width);
    void *map = _fa_os_map_aligned(1 << 22, 1 << 22);
    CHECK(map && bits_of(map) <= width);
    _fa_os_unmap(map, 1 << 22);
    unsigned thread_bits = 0;
    pthread_t t;
    CHECK(pthread_create(&t, NULL, thread_stack, &thread_bits) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(thread_bits > 0 && thread_bits <= width);
    free(small);
    free(large);
    return 0;
}

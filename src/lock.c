/* The contended half of the futex mutex (lock.h). */
#include "lock.h"

void _fa_mutex_lock_slow(fa_mutex_t *m)
{
    /* Mark the lock "contended" before sleeping, so the holder's unlock wakes us. Whoever
     * takes it from here keeps the 2, which may cause one spurious wake: harmless. */
    for (int spin = 0; spin < 100; spin++) {
        uint32_t expected = 0;
        if (__atomic_load_n(&m->state, __ATOMIC_RELAXED) == 0 &&
            __atomic_compare_exchange_n(&m->state, &expected, 1, false, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return;
        __builtin_ia32_pause();
    }
    while (__atomic_exchange_n(&m->state, 2, __ATOMIC_ACQUIRE) != 0)
        _fa_os_futex_wait(&m->state, 2, -1);
}

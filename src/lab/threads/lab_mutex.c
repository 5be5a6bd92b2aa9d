/* The contended halves of the lab mutex (lab_mutex.h). */
#include "lab/threads/lab_mutex.h"
#include "platform/atomic.h"

void _fa_lab_lock_slow(fa_lab_lock_t *l)
{
    uint64_t waits = 0;
    /* Spin first (platform/mutex.c says how long and why): lab critical sections are short. */
    if (_fa_futex_spin_acquire(&l->state))
        goto acquired;
    /* Mark the lock "maybe a sleeper" before sleeping, so its holder's unlock wakes us. The
     * thread that takes it from here keeps the 2, which can cost one spurious wake. */
    while (fa_atomic_exchange_acquire(&l->state, 2) != 0) {
        _fa_os_futex_wait(&l->state, 2, -1);
        waits++;
    }
acquired:
    l->acquisitions++;
    l->contended++;
    l->futex_waits += waits;
}

void _fa_lab_unlock_wake(fa_lab_lock_t *l)
{
    _fa_os_futex_wake(&l->state, 1);
    fa_atomic_add_relaxed(&l->futex_wakes, 1);
}

/* The contended half of the futex mutex (mutex.h). */
#include "platform/arch.h"
#include "platform/mutex.h"
#include "platform/atomic.h"

/* Check the lock after exponentially growing pauses: 1, 2, 4 ... 1024 (about 2,000 pauses in
 * all). Checking rarely lets the holder take the lock again and again with its
 * cache lines hot instead of handing it over (and the data it protects) on every call, and
 * spares most sleeps (two system calls and a context switch). docs/lab.md ("global") has the
 * measurements against a tight spin and no spin. */
bool _fa_futex_spin_acquire(uint32_t *state)
{
    for (int delay = 1; delay <= 1024; delay *= 2) {
        for (int i = 0; i < delay; i++)
            fa_cpu_relax();
        uint32_t expected = 0;
        if (fa_atomic_load_relaxed(state) == 0 && fa_atomic_cas_acquire(state, &expected, 1))
            return true;
    }
    return false;
}

void _fa_mutex_lock_slow(fa_mutex_t *m)
{
    if (_fa_futex_spin_acquire(&m->state))
        return;
    /* Mark the lock "contended" before sleeping, so the holder's unlock wakes us. Whoever
     * takes it from here keeps the 2, which may cause one spurious wake: harmless. */
    while (fa_atomic_exchange_acquire(&m->state, 2) != 0)
        _fa_os_futex_wait(&m->state, 2, -1);
}

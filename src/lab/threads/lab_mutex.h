/* The lab's futex mutex, with the statistics the lock studies report.
 *
 * Three states, as in platform/mutex.h: 0 unlocked, 1 locked, 2 locked and a thread may be sleeping.
 * Uncontended, lock is one compare-and-swap and unlock one exchange: one atomic instruction per
 * operation, and the kernel only when a thread must wait. (Unlock cannot be a plain store:
 * it must learn atomically whether someone went to sleep meanwhile, or that sleeper is never
 * woken.)
 *
 * The counters cost no atomic instruction: acquisitions, contended acquisitions and futex
 * waits are counted by the holder, inside the critical section; only wakes, counted after the
 * release on the (already slow) contended unlock path, use an atomic add. Read them while
 * holding the lock.
 */
#ifndef FA_LAB_LOCK_H
#define FA_LAB_LOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "common/message.h"
#include "platform/arch.h"
#include "platform/compiler.h"
#include "platform/mutex.h"
#include "platform/os.h"
#include "platform/atomic.h"

typedef struct {
    uint32_t state;
    uint64_t acquisitions; /* successful lock and trylock calls */
    uint64_t contended;    /* lock attempts that found the lock taken */
    uint64_t futex_waits;  /* times a thread slept in the kernel */
    uint64_t futex_wakes;  /* times an unlock woke a sleeper (atomic) */
} fa_lab_lock_t;

void _fa_lab_lock_slow(fa_lab_lock_t *l);
void _fa_lab_unlock_wake(fa_lab_lock_t *l);

static inline bool fa_lab_trylock(fa_lab_lock_t *l)
{
    uint32_t expected = 0;
    if (fa_atomic_cas_acquire(&l->state, &expected, 1)) {
        l->acquisitions++;
        return true;
    }
    return false;
}

static inline void fa_lab_lock(fa_lab_lock_t *l)
{
    if (fa_likely(fa_lab_trylock(l)))
        return;
    _fa_lab_lock_slow(l);
}

static inline void fa_lab_unlock(fa_lab_lock_t *l)
{
    /* Release; only a 2 (maybe a sleeper) needs the kernel. */
    if (fa_unlikely(fa_atomic_exchange_release(&l->state, 0) == 2))
        _fa_lab_unlock_wake(l);
}

/* After fork() in the child: the other threads are gone, start unlocked. */
static inline void fa_lab_lock_reset(fa_lab_lock_t *l)
{
    fa_atomic_store_relaxed(&l->state, 0);
}

#endif

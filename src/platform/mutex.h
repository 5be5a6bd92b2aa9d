/* A futex mutex with three states, so that an uncontended lock and unlock are one atomic
 * instruction each and the kernel is entered only when a thread has to wait:
 *   0 unlocked, 1 locked, 2 locked and someone may be sleeping on it. */
#ifndef FA_LOCK_H
#define FA_LOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "platform/os.h"
#include "platform/atomic.h"

typedef struct {
    uint32_t state;
} fa_mutex_t;

#define FA_MUTEX_INIT                                                                              \
    {                                                                                              \
        0                                                                                          \
    }

void _fa_mutex_lock_slow(fa_mutex_t *m);
/* Spin for a contended futex word (0 = unlocked): true once it was taken (set to 1), false
 * when the spin gave up and the caller should sleep. Shared by the lab's mutex. */
bool _fa_futex_spin_acquire(uint32_t *state);

static inline void fa_mutex_lock(fa_mutex_t *m)
{
    uint32_t expected = 0;
    if (__builtin_expect(fa_atomic_cas_acquire(&m->state, &expected, 1), 1))
        return;
    _fa_mutex_lock_slow(m);
}

/* Take the lock if it is free, without waiting: whether it was taken. */
static inline bool fa_mutex_trylock(fa_mutex_t *m)
{
    uint32_t expected = 0;
    return fa_atomic_cas_acquire(&m->state, &expected, 1);
}

static inline void fa_mutex_unlock(fa_mutex_t *m)
{
    /* Release; only a 2 (possible sleeper) needs the kernel. */
    if (__builtin_expect(fa_atomic_exchange_release(&m->state, 0) == 2, 0))
        _fa_os_futex_wake(&m->state, 1);
}

/* After fork() in the child: the lock holders are gone, start unlocked. */
static inline void fa_mutex_reset(fa_mutex_t *m)
{
    fa_atomic_store_relaxed(&m->state, 0);
}

#endif

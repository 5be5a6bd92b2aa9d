/* A one-time initialisation several threads may race to: the first runs it, the others wait
 * (spinning: it is short and happens once) until it is done. The state word starts at 0. */
#ifndef FA_ONCE_H
#define FA_ONCE_H

#include <stdbool.h>
#include <stdint.h>

#include "platform/arch.h"
#include "platform/atomic.h"
#include "platform/compiler.h"

enum { FA_ONCE_NOT_YET, FA_ONCE_RUNNING, FA_ONCE_DONE };

/* True for the one caller that must run the initialisation, then call fa_once_end; false once
 * it is done (waiting for it if another thread runs it now). */
static inline bool fa_once_begin(uint32_t *state)
{
    /* Acquire: what the initialising thread wrote before fa_once_end is visible. */
    if (fa_likely(fa_atomic_load_acquire(state) == FA_ONCE_DONE))
        return false;
    uint32_t expected = FA_ONCE_NOT_YET;
    if (fa_atomic_cas_acq_rel(state, &expected, FA_ONCE_RUNNING))
        return true;
    while (fa_atomic_load_acquire(state) != FA_ONCE_DONE)
        fa_cpu_relax();
    return false;
}

static inline void fa_once_end(uint32_t *state)
{
    fa_atomic_store_release(state, FA_ONCE_DONE); /* pairs with fa_once_begin's acquire */
}

#endif

/* The heap profiler of FITALLOC_PROFILE (docs/profile.md): sampled allocations with their
 * stacks, the live ones at the peak and at exit, written in the heap-profile format of
 * gperftools, which google-pprof and jeprof read.
 *
 * Sampling is by bytes: each thread counts down the bytes it allocates, and the allocation
 * that reaches zero is sampled; the next distance is drawn from an exponential distribution
 * of mean FITALLOC_PROFILE_RATE (a Poisson process over bytes, as in tcmalloc and jemalloc),
 * so a block of s bytes is sampled with probability 1 - exp(-s / rate) and the file's header
 * gives the rate by which pprof scales each stack back up.
 *
 * The layers above call in at their slow paths only: the engine counts the blocks it hands
 * its inline fast path at once and stops that list at the sample point (engine/profile_pages.c),
 * the lab and large blocks count each allocation. A sampled block is kept in a side table
 * until it is freed; frees reach it through the slow paths. Nothing here allocates: tables
 * live in mappings of their own. */
#ifndef FA_PROFILE_H
#define FA_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/atomic.h"
#include "platform/compiler.h"

/* Set once, from the library's constructor, when FITALLOC_PROFILE names a writable prefix. */
extern bool _fa_profiling __attribute__((visibility("hidden")));

/* A thread's sampler. */
struct fa_profile_thread {
    int64_t left;   /* bytes until the next sample point */
    uint64_t state; /* its random generator (0: not seeded yet) */
    bool busy;      /* inside the profiler: what it allocates itself is not sampled */
};
extern __thread struct fa_profile_thread _fa_profile_self;

/* The thread passed its sample point: draw the next distance; false inside the profiler. */
bool _fa_profile_crossed(void);

/* `bytes` allocated by the thread: true if this allocation is a sample. */
static inline bool fa_profile_charge(size_t bytes)
{
    struct fa_profile_thread *t = &_fa_profile_self;
    t->left -= (int64_t)bytes;
    return fa_unlikely(t->left <= 0) && _fa_profile_crossed();
}

/* The thread's first distance, drawn at its first use. */
void _fa_profile_thread_start(void);

/* How many blocks of `size` bytes the thread can allocate before its sample point. */
static inline size_t fa_profile_blocks_before_sample(size_t size)
{
    if (fa_unlikely(!_fa_profile_self.state))
        _fa_profile_thread_start();
    int64_t left = _fa_profile_self.left;
    return left > 0 ? (size_t)(left - 1) / size : 0;
}

/* An allocation counted where it is made (large blocks, secure mode's aligned and large ones):
 * p of `bytes` (NULL: none), the sample if the thread's sample point falls in it. */
void _fa_profile_count(const void *p, size_t bytes);
static inline void fa_profile_count(const void *p, size_t bytes)
{
    if (fa_unlikely(_fa_profiling) && p)
        _fa_profile_count(p, bytes);
}

/* Record the sampled block p of `bytes` with the calling thread's stack. */
void _fa_profile_record(const void *p, size_t bytes);
/* The same for a block the allocator grants `granted` bytes for (the lab's usable size), so
 * that the profile also says, by site, the bytes granted beyond those asked for. */
void _fa_profile_record_granted(const void *p, size_t bytes, size_t granted);
/* p is being freed: true if it was a sampled block (then forgotten). Any thread, lock-free
 * when p was not sampled. */
bool _fa_profile_forget(const void *p);
/* Write the dumps FITALLOC_PROFILE_SIGNAL asked for since the last look: call where no
 * allocator lock is held. Inline, the test whether a signal came (the signals counted, and
 * those a dump answered). */
extern uint32_t _fa_profile_signals __attribute__((visibility("hidden")));
extern uint32_t _fa_profile_signals_seen __attribute__((visibility("hidden")));
void _fa_profile_safe_point(void);
static inline __attribute__((always_inline)) void fa_profile_safe_point(void)
{
    if (fa_unlikely(fa_atomic_load_relaxed(&_fa_profile_signals) !=
                    fa_atomic_load_relaxed(&_fa_profile_signals_seen)))
        _fa_profile_safe_point();
}

/* The process's start (options read; may allocate), its exit, and fork. */
void _fa_profile_start(void);
void _fa_profile_exit(void);
void _fa_profile_fork_prepare(void);
void _fa_profile_fork_parent(void);
void _fa_profile_fork_child(void);

/* For tests: the thread's generator from `seed`, with a fresh distance to its sample point. */
void _fa_profile_seed(uint64_t seed);
/* The mean distance between two samples in bytes (FITALLOC_PROFILE_RATE). */
extern uint64_t _fa_profile_rate;

#endif

/* The profiler's files as they see each other: sampler.c (distances and weights), stacks.c
 * (the table of stacks with their counts, and of sampled blocks), dump.c (the files),
 * profile.c (start, exit, fork, the signal). */
#ifndef FA_PROFILE_INTERNAL_H
#define FA_PROFILE_INTERNAL_H

#include "profile/profile.h"
#include "platform/mutex.h"

/* Frames kept of a stack; a deeper one is cut there and ends with the marker frame. */
#define FA_PROFILE_DEPTH 64

/* ---- sampler.c ---- */
double _fa_profile_log(double x);     /* natural logarithm, x > 0 (no libm) */
double _fa_profile_exp_neg(double x); /* exp(-x), x >= 0 */
/* The bytes a sample of `bytes` stands for: bytes / (1 - exp(-bytes / rate)). */
double _fa_profile_weight(uint64_t bytes);

/* ---- stacks.c ---- */
/* `bytes` of zeroed memory, never given back (under the lock): the profiler's tables, stacks
 * and prefix share its pages. NULL if none can be had. */
void *_fa_profile_take(size_t bytes);
struct fa_profile_counts {
    uint64_t live_count, live_bytes, alloc_count, alloc_bytes;
    uint64_t live_granted; /* the bytes granted for the live samples (the lab's usable sizes) */
};
struct fa_profile_stack {
    struct fa_profile_stack *chain; /* same hash bucket */
    struct fa_profile_stack *next;  /* every stack, newest first */
    uint64_t hash;
    uint32_t depth;
    struct fa_profile_counts now, peak;
    uintptr_t frames[];
};
/* Guards both tables, the counts and the peak. */
extern fa_mutex_t _fa_profile_lock;
/* Every stack, newest first (under the lock). */
extern struct fa_profile_stack *_fa_profile_stacks;
/* Count the sampled block p of `bytes` (`granted` bytes given for it) under its stack, and keep
 * it until it is freed. */
void _fa_profile_table_record(const void *p, uint64_t bytes, uint64_t granted,
                              const uintptr_t *frames, size_t depth);
/* Some sample was granted more bytes than it asked for: the slack files are written. */
extern bool _fa_profile_granted_more;
/* Forget every sample and count (a fork child starts its own profile). */
void _fa_profile_tables_reset(void);
/* The live counts become the peak's snapshot if their estimate is higher (at exit). */
void _fa_profile_snapshot_if_higher(void);

/* ---- dump.c ---- */
/* Write prefix.<pid>.<name>.heap from the peak snapshot or the live counts (under the lock),
 * and prefix.<pid>.<name>.slack when _fa_profile_granted_more; false after a warning line if
 * they cannot be written. */
bool _fa_profile_write(const char *prefix, const char *name, bool peak);

/* ---- profile.c ---- */
/* fitalloc's own code, whose frames a stack leaves out: [start, end). */
extern uintptr_t _fa_profile_own_start, _fa_profile_own_end;
/* The frame that ends a stack cut at FA_PROFILE_DEPTH: pprof names it. */
void fitalloc_profile_stack_truncated(void);

#endif

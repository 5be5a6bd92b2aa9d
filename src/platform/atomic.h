/* Atomic operations on plain variables, named by their memory order, so that the ordering
 * protocol reads at the call: fa_atomic_load_acquire pairs with fa_atomic_store_release (or a
 * release/acq_rel read-modify-write) on the same word; _relaxed promises nothing beyond the
 * atomicity of the access. Type-generic (GCC's __atomic builtins), for the word-sized integers
 * and pointers fitalloc uses.
 *
 * Compare-and-swap: fa_atomic_cas_<order>(p, expected, desired) replaces *p by desired if it
 * equals *expected and returns true; otherwise it stores the value seen in *expected and returns
 * false. The order named is that of success; a failure is a load with the order's acquiring part
 * (acquire for _acquire and _acq_rel, relaxed for the others). The _weak forms may fail
 * spuriously: for retry loops. */
#ifndef FA_ATOMIC_H
#define FA_ATOMIC_H

#include <stdbool.h>

#define fa_atomic_load_relaxed(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define fa_atomic_load_acquire(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define fa_atomic_load_seq_cst(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)

#define fa_atomic_store_relaxed(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define fa_atomic_store_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define fa_atomic_store_seq_cst(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)

/* The old value. */
#define fa_atomic_exchange_relaxed(p, v) __atomic_exchange_n((p), (v), __ATOMIC_RELAXED)
#define fa_atomic_exchange_acquire(p, v) __atomic_exchange_n((p), (v), __ATOMIC_ACQUIRE)
#define fa_atomic_exchange_release(p, v) __atomic_exchange_n((p), (v), __ATOMIC_RELEASE)
#define fa_atomic_exchange_acq_rel(p, v) __atomic_exchange_n((p), (v), __ATOMIC_ACQ_REL)
#define fa_atomic_exchange_seq_cst(p, v) __atomic_exchange_n((p), (v), __ATOMIC_SEQ_CST)

/* add and sub return the new value, fetch_add the old one. */
#define fa_atomic_add_relaxed(p, d) __atomic_add_fetch((p), (d), __ATOMIC_RELAXED)
#define fa_atomic_add_release(p, d) __atomic_add_fetch((p), (d), __ATOMIC_RELEASE)
#define fa_atomic_add_seq_cst(p, d) __atomic_add_fetch((p), (d), __ATOMIC_SEQ_CST)
#define fa_atomic_sub_relaxed(p, d) __atomic_sub_fetch((p), (d), __ATOMIC_RELAXED)
#define fa_atomic_sub_seq_cst(p, d) __atomic_sub_fetch((p), (d), __ATOMIC_SEQ_CST)
#define fa_atomic_fetch_add_relaxed(p, d) __atomic_fetch_add((p), (d), __ATOMIC_RELAXED)

/* A full fence, for the store-then-load patterns that need one (Dekker style). */
#define fa_atomic_fence_seq_cst() __atomic_thread_fence(__ATOMIC_SEQ_CST)

#define fa_atomic_cas_relaxed(p, e, d)                                                             \
    __atomic_compare_exchange_n((p), (e), (d), false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)
#define fa_atomic_cas_acquire(p, e, d)                                                             \
    __atomic_compare_exchange_n((p), (e), (d), false, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)
#define fa_atomic_cas_acq_rel(p, e, d)                                                             \
    __atomic_compare_exchange_n((p), (e), (d), false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)
#define fa_atomic_cas_weak_relaxed(p, e, d)                                                        \
    __atomic_compare_exchange_n((p), (e), (d), true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)
#define fa_atomic_cas_weak_release(p, e, d)                                                        \
    __atomic_compare_exchange_n((p), (e), (d), true, __ATOMIC_RELEASE, __ATOMIC_RELAXED)
#define fa_atomic_cas_weak_seq_cst(p, e, d)                                                        \
    __atomic_compare_exchange_n((p), (e), (d), true, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)

#endif

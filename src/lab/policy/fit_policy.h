/* A fit policy answers one question, "which free block for a block of `size` bytes?", as a
 * find function over the heap's free-block index (lab/index/free_index.h), whose kind the
 * policy chooses. The classic heap (lab/heap/classic_heap.c) keeps the index; the policy only
 * searches it (next fit also moves its rover).
 *
 *   policy      FITALLOC_LAB_INDEX=tree                      FITALLOC_LAB_INDEX=list
 *   first       address tree, augmented descent  O(log n)    address list, walk  O(n)
 *   next        address tree, from the rover     O(log n)    address list, from the rover
 *   best        size tree, lower bound           O(log n)    address list, whole walk
 *   worst       size tree, rightmost             O(log n)    address list, whole walk
 *   segregated  exact LIFO lists O(1), then best fit over the larger blocks (size tree or list)
 *   tlsf        its two-level lists and bitmaps, good fit  O(1)   (the same: its own index)
 *   buddy       a list per power of two, smallest order    O(1)   (the same; the heap takes
 *               the buddy layout for it, heap/buddy.h)
 *   slab        a list per size class, pages of runs      O(1)   (the same; the slab layout,
 *               heap/slab.h; a large request: first fit over the free runs)
 *
 * Both index kinds choose the same block for the same heap (tests/lab/test_tree_vs_list.c).
 */
#ifndef FA_LAB_FIT_POLICY_H
#define FA_LAB_FIT_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "common/options.h"
#include "lab/index/free_index.h"

struct fa_fit_policy {
    const char *name;
    enum fa_index_kind tree; /* the index it searches with FITALLOC_LAB_INDEX=tree */
    bool exact_lists;        /* it wants the exact-size lists around the index */
    /* A free block of at least `size` bytes, chosen by the policy, or 0. Does not remove it. */
    uintptr_t (*find)(struct fa_free_index *ix, size_t size);
};

/* The policy (an unknown value: best fit). */
const struct fa_fit_policy *_fa_fit_policy(enum fa_policy policy);
/* The index kind a heap of this policy and FITALLOC_LAB_INDEX choice keeps. */
enum fa_index_kind _fa_fit_index_kind(const struct fa_fit_policy *policy, enum fa_lab_index index);

/* One per policy (policy_*.c). */
extern const struct fa_fit_policy _fa_policy_first, _fa_policy_next, _fa_policy_best,
    _fa_policy_worst, _fa_policy_segregated, _fa_policy_tlsf, _fa_policy_buddy, _fa_policy_slab;

/* policy_best.c: best fit over the index (also segregated fit's larger blocks). */
uintptr_t _fa_best_fit(struct fa_free_index *ix, size_t size);

#endif

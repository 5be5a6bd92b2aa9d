/* A fit policy answers one question, "which free block for a block of `size` bytes?", and owns
 * the index of free blocks that answers it fast. The classic heap (classic_heap.c) calls it
 * through this table and never looks inside the index.
 *
 *   policy      FITALLOC_LAB_INDEX=tree                      FITALLOC_LAB_INDEX=list
 *   first       address tree, augmented descent  O(log n)    address list, walk  O(n)
 *   next        address tree, from the rover     O(log n)    address list, from the rover
 *   best        size tree, lower bound           O(log n)    address list, whole walk
 *   worst       size tree, rightmost             O(log n)    address list, whole walk
 *   segregated  exact LIFO lists O(1), then best fit over the larger blocks (size tree or list)
 *
 * Both indexes choose the same block for the same heap (tests/lab/test_tree_vs_list.c).
 */
#ifndef FA_LAB_FIT_POLICY_H
#define FA_LAB_FIT_POLICY_H

#include <stdint.h>

#include "common/options.h"

struct fa_classic_heap;

struct fa_fit_policy {
    const char *name;
    void (*init)(struct fa_classic_heap *h);
    /* Index maintenance: the block's header already holds its (new) size and FREE bit. */
    void (*insert)(struct fa_classic_heap *h, uintptr_t block);
    void (*remove)(struct fa_classic_heap *h, uintptr_t block);
    void (*resized)(struct fa_classic_heap *h, uintptr_t block, size_t old_size);
    /* new_block (just below old_block, which merged into it) takes old_block's place. */
    void (*replace)(struct fa_classic_heap *h, uintptr_t old_block, uintptr_t new_block);
    /* A free block of at least size bytes, chosen by the policy, or 0. Does not remove it. */
    uintptr_t (*find)(struct fa_classic_heap *h, size_t size);
    /* Call fn once for every block in the index. */
    void (*visit)(struct fa_classic_heap *h, void (*fn)(uintptr_t block, void *arg), void *arg);
    /* Check the index's own structure (order, links, counts); abort on a violation. */
    void (*check)(struct fa_classic_heap *h);
};

const struct fa_fit_policy *_fa_fit_policy(enum fa_policy policy, enum fa_lab_index index);

/* One table per policy and index (policy_*.c). */
extern const struct fa_fit_policy _fa_policy_first_tree, _fa_policy_first_list;
extern const struct fa_fit_policy _fa_policy_next_tree, _fa_policy_next_list;
extern const struct fa_fit_policy _fa_policy_best_tree, _fa_policy_best_list;
extern const struct fa_fit_policy _fa_policy_worst_tree, _fa_policy_worst_list;
extern const struct fa_fit_policy _fa_policy_segregated_tree, _fa_policy_segregated_list;

/* fit_index.c: the three shared indexes, as table entries. */
void _fa_index_addr_tree_init(struct fa_classic_heap *h);
void _fa_index_addr_tree_insert(struct fa_classic_heap *h, uintptr_t block);
void _fa_index_addr_tree_remove(struct fa_classic_heap *h, uintptr_t block);
void _fa_index_addr_tree_resized(struct fa_classic_heap *h, uintptr_t block, size_t old_size);
void _fa_index_addr_tree_replace(struct fa_classic_heap *h, uintptr_t old_block,
                                 uintptr_t new_block);

void _fa_index_size_tree_init(struct fa_classic_heap *h);
void _fa_index_size_tree_insert(struct fa_classic_heap *h, uintptr_t block);
void _fa_index_size_tree_remove(struct fa_classic_heap *h, uintptr_t block);
void _fa_index_size_tree_resized(struct fa_classic_heap *h, uintptr_t block, size_t old_size);
void _fa_index_size_tree_replace(struct fa_classic_heap *h, uintptr_t old_block,
                                 uintptr_t new_block);

void _fa_index_tree_visit(struct fa_classic_heap *h, void (*fn)(uintptr_t block, void *arg),
                          void *arg);
void _fa_index_tree_check(struct fa_classic_heap *h);

void _fa_index_addr_list_init(struct fa_classic_heap *h);
void _fa_index_addr_list_insert(struct fa_classic_heap *h, uintptr_t block);
void _fa_index_addr_list_remove(struct fa_classic_heap *h, uintptr_t block);
void _fa_index_addr_list_resized(struct fa_classic_heap *h, uintptr_t block, size_t old_size);
void _fa_index_addr_list_replace(struct fa_classic_heap *h, uintptr_t old_block,
                                 uintptr_t new_block);
void _fa_index_addr_list_visit(struct fa_classic_heap *h, void (*fn)(uintptr_t block, void *arg),
                               void *arg);
void _fa_index_addr_list_check(struct fa_classic_heap *h);

/* The index entries of a policy table, for the policies that use a shared index unchanged:
 * e.g. {.name = "first", FA_ADDR_TREE_INDEX, .find = find_tree}. */
#define FA_ADDR_TREE_INDEX                                                                         \
    .init = _fa_index_addr_tree_init, .insert = _fa_index_addr_tree_insert,                        \
    .remove = _fa_index_addr_tree_remove, .resized = _fa_index_addr_tree_resized,                  \
    .replace = _fa_index_addr_tree_replace, .visit = _fa_index_tree_visit,                         \
    .check = _fa_index_tree_check
#define FA_SIZE_TREE_INDEX                                                                         \
    .init = _fa_index_size_tree_init, .insert = _fa_index_size_tree_insert,                        \
    .remove = _fa_index_size_tree_remove, .resized = _fa_index_size_tree_resized,                  \
    .replace = _fa_index_size_tree_replace, .visit = _fa_index_tree_visit,                         \
    .check = _fa_index_tree_check
#define FA_ADDR_LIST_INDEX                                                                         \
    .init = _fa_index_addr_list_init, .insert = _fa_index_addr_list_insert,                        \
    .remove = _fa_index_addr_list_remove, .resized = _fa_index_addr_list_resized,                  \
    .replace = _fa_index_addr_list_replace, .visit = _fa_index_addr_list_visit,                    \
    .check = _fa_index_addr_list_check

/* policy_best.c: best fit over an address-ordered list (also segregated fit's larger blocks). */
struct fa_addr_list;
uintptr_t _fa_best_fit_in_list(const struct fa_addr_list *list, size_t size);

#endif

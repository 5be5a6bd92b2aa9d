/* A red-black tree of free blocks, its nodes living in the free blocks themselves.
 *
 * Two orders, chosen per tree:
 *   FA_TREE_BY_ADDRESS  key = block address; each node is augmented with the largest block size
 *                       in its subtree (kept in the block's word 1), so "lowest-addressed block
 *                       of at least n bytes at or after address a" is one O(log n) descent:
 *                       first fit and next fit.
 *   FA_TREE_BY_SIZE     key = (size, address): "smallest block of at least n bytes, lowest
 *                       address among equals" is a lower bound, O(log n): best fit; the largest
 *                       block is the rightmost: worst fit.
 * Every operation is O(log n); the tree never allocates (the node is the free block's payload).
 */
#ifndef FA_LAB_FIT_TREE_H
#define FA_LAB_FIT_TREE_H

#include <stddef.h>
#include <stdint.h>

/* child[FA_LEFT] holds the smaller keys. One array instead of two named fields lets each
 * mirrored case of the rebalancing be written once, with the side as a variable. */
enum { FA_LEFT = 0, FA_RIGHT = 1 };

struct fa_tree_node {
    struct fa_tree_node *child[2];
    uintptr_t parent_color; /* parent pointer, bit 0 set when the node is red */
};

enum fa_tree_order { FA_TREE_BY_ADDRESS, FA_TREE_BY_SIZE };

struct fa_tree {
    struct fa_tree_node *root;
    enum fa_tree_order order;
    size_t count;
    /* Nodes visited by insert, remove and the lower bound (descents, successor walks,
     * rebalancing rounds): tests compare a search's cost with TLSF's (tlsf_index.h). */
    uint64_t steps;
};

void _fa_tree_init(struct fa_tree *t, enum fa_tree_order order);
void _fa_tree_insert(struct fa_tree *t, uintptr_t block);
void _fa_tree_remove(struct fa_tree *t, uintptr_t block);
/* Address order only: new_block takes old_block's place (no key lies between the two). */
void _fa_tree_replace(struct fa_tree *t, uintptr_t old_block, uintptr_t new_block);
/* The size of a block in the tree changed (its header already holds the new size). */
void _fa_tree_size_changed(struct fa_tree *t, uintptr_t block);
/* Address order: the lowest-addressed block at or after `from` with size >= size, or 0. */
uintptr_t _fa_tree_first_fit(const struct fa_tree *t, uintptr_t from, size_t size);
/* Size order: the smallest block with size >= size (lowest address among equals), or 0. */
uintptr_t _fa_tree_lower_bound(struct fa_tree *t, size_t size);
/* In-order walk: first block (0 if empty), the block after `block` (0 at the end), last. */
uintptr_t _fa_tree_first(const struct fa_tree *t);
uintptr_t _fa_tree_next(uintptr_t block);
uintptr_t _fa_tree_last(const struct fa_tree *t);
/* Check order, red-black rules, parent links, augmented values and count; on a violation
 * abort with a message naming `heap`. */
void _fa_tree_check(const struct fa_tree *t, const void *heap);

#endif

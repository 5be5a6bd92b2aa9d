/* Linked lists of free blocks, the nodes living in the free blocks themselves.
 *
 *   fa_addr_list  the textbook free list: doubly linked, in address order. Insertion walks from
 *                 the head (O(n)); searches walk it too. FITALLOC_LAB_INDEX=list uses it for
 *                 every policy, to show the classic cost next to the trees.
 *   fa_lifo_list  an unordered doubly linked list with push and pop at the head, O(1): the
 *                 exact-size lists of segregated fit and TLSF's lists (tlsf_index.h).
 */
#ifndef FA_LAB_FIT_LIST_H
#define FA_LAB_FIT_LIST_H

#include <stddef.h>
#include <stdint.h>

#include "lab/index/block.h"

struct fa_list_node {
    struct fa_list_node *prev, *next;
};

struct fa_addr_list {
    struct fa_list_node *head;
    /* Next fit: the first node whose address is >= the heap's rover address (NULL: none). It
     * is kept up to date on every insertion and removal, so next fit starts its walk here. */
    struct fa_list_node *rover;
    size_t count;
};

struct fa_lifo_list {
    struct fa_list_node *head;
    size_t count;
};

/* rover_addr is the heap's next-fit rover (0 when the policy is not next fit). */
void _fa_addr_list_insert(struct fa_addr_list *l, uintptr_t block, uintptr_t rover_addr);
void _fa_addr_list_remove(struct fa_addr_list *l, uintptr_t block);
/* new_block takes old_block's place (no listed block lies between the two addresses). */
void _fa_addr_list_replace(struct fa_addr_list *l, uintptr_t old_block, uintptr_t new_block,
                           uintptr_t rover_addr);
/* The rover address moved to `block`, which is in the list. */
void _fa_addr_list_set_rover(struct fa_addr_list *l, uintptr_t block);
/* Check order, links, count and the rover; abort with a message naming `heap`. */
void _fa_addr_list_check(const struct fa_addr_list *l, const void *heap, uintptr_t rover_addr);

void _fa_lifo_push(struct fa_lifo_list *l, uintptr_t block);
void _fa_lifo_remove(struct fa_lifo_list *l, uintptr_t block);
/* Check links and count, and that every block has `size` (0: any); abort naming `heap`. */
void _fa_lifo_check(const struct fa_lifo_list *l, const void *heap, size_t size);

static inline struct fa_list_node *fa_list_node_of(uintptr_t block)
{
    return (struct fa_list_node *)(block + FA_BLOCK_HEADER);
}

/* The block of a node (0 for NULL). */
static inline uintptr_t fa_list_block(const struct fa_list_node *n)
{
    return n ? (uintptr_t)n - FA_BLOCK_HEADER : 0;
}

/* Walking either kind of list: the block after `block`, 0 at the end. */
static inline uintptr_t fa_list_next(uintptr_t block)
{
    return fa_list_block(fa_list_node_of(block)->next);
}

static inline uintptr_t _fa_addr_list_first(const struct fa_addr_list *l)
{
    return fa_list_block(l->head);
}

static inline uintptr_t _fa_lifo_first(const struct fa_lifo_list *l)
{
    return fa_list_block(l->head);
}

#endif

/* The index of a classic heap's free blocks: one object the heap holds, of the kind its policy
 * searches (lab/policy/fit_policy.h), which the heap keeps up to date as blocks are freed,
 * split, merged and taken. Its nodes live in the free blocks themselves (fit_tree.h,
 * fit_list.h).
 *
 *   address tree   red-black tree by address, augmented with each subtree's largest block
 *   size tree      red-black tree by (size, address)
 *   address list   the textbook list in address order (FITALLOC_LAB_INDEX=list)
 *   TLSF           two-level segregated lists under bitmaps, O(1) (tlsf_index.h)
 *   buddy lists    one list per power of two under a bitmap, the buddy heap's (buddy_lists.h)
 *   slab lists     one list per size class and one of free page runs, the slab heap's
 *                  (slab_lists.h)
 *   The last three keep their lists in storage after the heap, like the exact lists.
 *
 * Segregated fit wraps exact-size lists around it: with exact_count > 0, a free block of at
 * most exact_max_block bytes sits in the LIFO list of its size, exact[(size - FA_BLOCK_MIN) /
 * FA_BLOCK_ALIGN], and not in the index of the kind. Invariants (checked by _fa_index_check):
 *
 *   every indexed block is free;  list or tree order holds;  count(index) + Σ count(exact[i])
 *   = the heap's free blocks;  every block of exact[i] has FA_BLOCK_MIN + i × FA_BLOCK_ALIGN
 *   bytes;  every block of the index of the kind has more than exact_max_block bytes.
 */
#ifndef FA_LAB_FREE_INDEX_H
#define FA_LAB_FREE_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "lab/index/block.h"
#include "lab/index/buddy_lists.h"
#include "lab/index/fit_list.h"
#include "lab/index/fit_tree.h"
#include "lab/index/slab_lists.h"
#include "lab/index/tlsf_index.h"

enum fa_index_kind {
    FA_INDEX_ADDRESS_TREE,
    FA_INDEX_SIZE_TREE,
    FA_INDEX_ADDRESS_LIST,
    /* From here on, segregated lists: a resized block changes list (free_index.c). */
    FA_INDEX_TLSF,
    FA_INDEX_BUDDY,
    FA_INDEX_SLAB
};

struct fa_free_index {
    enum fa_index_kind kind;
    struct fa_tree tree;      /* the tree kinds */
    struct fa_addr_list list; /* the address list */
    uintptr_t rover;          /* next fit: the search starts at the first block >= rover */
    struct fa_lifo_list *exact;
    size_t exact_count;
    size_t exact_max_block;       /* 0 without exact lists */
    struct fa_tlsf *tlsf;         /* the TLSF kind */
    struct fa_buddy_lists *buddy; /* the buddy kind */
    struct fa_slab_lists *slab;   /* the slab kind (its page table set by the heap) */
};

/* Bytes of storage the kind keeps outside the index (TLSF's and the buddy's lists), or 0. */
size_t _fa_index_storage_size(enum fa_index_kind kind);
/* An empty index; `exact` holds exact_count zeroed lists (0: none); `storage` has
 * _fa_index_storage_size(kind) bytes, 8-byte aligned (NULL when that is 0). */
void _fa_index_init(struct fa_free_index *ix, enum fa_index_kind kind, struct fa_lifo_list *exact,
                    size_t exact_count, void *storage);
/* A free block in or out: its header holds the size it has in the index. */
void _fa_index_insert(struct fa_free_index *ix, uintptr_t block);
void _fa_index_remove(struct fa_free_index *ix, uintptr_t block);
/* The indexed block's size changed from old_size to the one its header holds now. */
void _fa_index_resized(struct fa_free_index *ix, uintptr_t block, size_t old_size);
/* new_block (just below old_block, which merged into it) takes old_block's place; old_block's
 * header still holds its size, new_block's its new one. */
void _fa_index_replace(struct fa_free_index *ix, uintptr_t old_block, uintptr_t new_block);
/* fn once for every indexed block: the exact lists' first, then the index of the kind. */
void _fa_index_visit(const struct fa_free_index *ix, void (*fn)(uintptr_t block, void *arg),
                     void *arg);
/* The invariants above; abort with a message naming `heap` on a violation. */
void _fa_index_check(const struct fa_free_index *ix, const void *heap);
/* Steps the index has taken so far (the size tree's and TLSF's; see fit_tree.h, tlsf_index.h). */
uint64_t _fa_index_steps(const struct fa_free_index *ix);

/* The exact list of blocks of `size` bytes, or NULL if that size has none. */
static inline struct fa_lifo_list *fa_index_exact_list(const struct fa_free_index *ix, size_t size)
{
    return size <= ix->exact_max_block ? &ix->exact[(size - FA_BLOCK_MIN) / FA_BLOCK_ALIGN] : NULL;
}

#endif

/* The binary buddy system's choice: the smallest free block of at least the request's power of
 * two, one find-first-set over the bitmap of its per-order lists (index/buddy_lists.h). The
 * splitting into halves and the merging with buddies belong to the heap's buddy layout
 * (heap/buddy.h), which a heap of this policy takes. Its own index under FITALLOC_LAB_INDEX. */
#include "lab/policy/fit_policy.h"

static uintptr_t find(struct fa_free_index *ix, size_t size)
{
    return _fa_buddy_lists_find(ix->buddy, size);
}

const struct fa_fit_policy _fa_policy_buddy = {"buddy", FA_INDEX_BUDDY, false, find};

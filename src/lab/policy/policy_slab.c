/* Simple segregated storage, the slab allocator's choice (Bonwick 1994): the head of the
 * request's size class's free list, or for a large request the first free run of whole pages
 * long enough (index/slab_lists.h). Carving pages into blocks and returning them belong to the
 * heap's slab layout (heap/slab.h), which a heap of this policy takes. Its own index under
 * FITALLOC_LAB_INDEX. */
#include "lab/policy/fit_policy.h"

static uintptr_t find(struct fa_free_index *ix, size_t size)
{
    return _fa_slab_lists_find(ix->slab, size);
}

const struct fa_fit_policy _fa_policy_slab = {"slab", FA_INDEX_SLAB, false, find};

/* First fit: the lowest-addressed free block that fits.
 * Tree: one descent of the address tree guided by each subtree's largest block, O(log n).
 * List: a walk of the address-ordered list, O(n). */
#include "lab/policy/fit_policy.h"

static uintptr_t find(struct fa_free_index *ix, size_t size)
{
    if (ix->kind != FA_INDEX_ADDRESS_LIST)
        return _fa_tree_first_fit(&ix->tree, 0, size);
    for (uintptr_t b = _fa_addr_list_first(&ix->list); b; b = fa_list_next(b))
        if (fa_block_size(b) >= size)
            return b;
    return 0;
}

const struct fa_fit_policy _fa_policy_first = {"first", FA_INDEX_ADDRESS_TREE, false, find};

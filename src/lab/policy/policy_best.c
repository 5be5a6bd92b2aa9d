/* Best fit: the smallest free block that fits, the lowest-addressed one among equals.
 * Tree: a lower bound in the tree ordered by (size, address), O(log n).
 * List: walk the whole address-ordered list (stopping early at an exact fit), O(n). */
#include "lab/policy/fit_policy.h"

uintptr_t _fa_best_fit(struct fa_free_index *ix, size_t size)
{
    if (ix->kind != FA_INDEX_ADDRESS_LIST)
        return _fa_tree_lower_bound(&ix->tree, size);
    uintptr_t best = 0;
    size_t best_size = 0;
    for (uintptr_t b = _fa_addr_list_first(&ix->list); b; b = fa_list_next(b)) {
        size_t s = fa_block_size(b);
        /* Strictly smaller only: the first (lowest-addressed) of equal sizes wins. */
        if (s >= size && (!best || s < best_size)) {
            best = b;
            best_size = s;
            if (s == size)
                break;
        }
    }
    return best;
}

const struct fa_fit_policy _fa_policy_best = {"best", FA_INDEX_SIZE_TREE, false, _fa_best_fit};

/* Worst fit: the largest free block (the lowest-addressed one among equals), if it fits.
 * Tree: the rightmost node of the (size, address) tree gives the largest size, a lower bound
 * for that size the lowest address, O(log n).
 * List: walk the whole address-ordered list, O(n). */
#include "lab/policy/fit_policy.h"

static uintptr_t find(struct fa_free_index *ix, size_t size)
{
    if (ix->kind != FA_INDEX_ADDRESS_LIST) {
        uintptr_t last = _fa_tree_last(&ix->tree);
        if (!last || fa_block_size(last) < size)
            return 0;
        return _fa_tree_lower_bound(&ix->tree, fa_block_size(last));
    }
    uintptr_t worst = 0;
    size_t worst_size = 0;
    for (uintptr_t b = _fa_addr_list_first(&ix->list); b; b = fa_list_next(b)) {
        size_t s = fa_block_size(b);
        if (s > worst_size) { /* strictly larger: the first of equal sizes wins */
            worst = b;
            worst_size = s;
        }
    }
    return worst_size >= size ? worst : 0;
}

const struct fa_fit_policy _fa_policy_worst = {"worst", FA_INDEX_SIZE_TREE, false, find};

/* First fit: the lowest-addressed free block that fits.
 * Tree: one descent of the address tree guided by each subtree's largest block, O(log n).
 * List: walk the address-ordered list from its head, O(n). */
#include "lab/heap/classic_heap.h"

static uintptr_t find_tree(fa_classic_heap *h, size_t size)
{
    return _fa_tree_first_fit(&h->tree, 0, size);
}

static uintptr_t find_list(fa_classic_heap *h, size_t size)
{
    for (uintptr_t b = _fa_addr_list_first(&h->list); b; b = fa_list_next(b))
        if (fa_block_size(b) >= size)
            return b;
    return 0;
}

const struct fa_fit_policy _fa_policy_first_tree = {
    .name = "first",
    FA_ADDR_TREE_INDEX,
    .find = find_tree,
};

const struct fa_fit_policy _fa_policy_first_list = {
    .name = "first",
    FA_ADDR_LIST_INDEX,
    .find = find_list,
};

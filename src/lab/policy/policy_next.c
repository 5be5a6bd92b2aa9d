/* Next fit: first fit, but the search starts where the previous one ended and wraps once.
 *
 * "Where the previous one ended" is the heap's rover: the address of the block the previous
 * successful search chose (a grow leaves it alone). A search takes the lowest-addressed block
 * that fits at or after the rover, else the lowest-addressed one before it. The rover is an
 * address, not a block, so merges and splits never leave it dangling; both indexes follow the
 * same rule and so choose the same block.
 * Tree: two augmented descents, O(log n). List: walk from the cached rover node to the end, then
 * from the head up to it, O(n) at worst (the textbook next fit). */
#include "lab/policy/fit_policy.h"

static uintptr_t find(struct fa_free_index *ix, size_t size)
{
    uintptr_t b;
    if (ix->kind != FA_INDEX_ADDRESS_LIST) {
        b = _fa_tree_first_fit(&ix->tree, ix->rover, size);
        if (!b)
            b = _fa_tree_first_fit(&ix->tree, 0, size); /* wrap: only blocks before the rover */
        if (b)
            ix->rover = b;
        return b;
    }
    uintptr_t start = fa_list_block(ix->list.rover);
    for (b = start; b; b = fa_list_next(b))
        if (fa_block_size(b) >= size)
            goto found;
    for (b = _fa_addr_list_first(&ix->list); b && b != start; b = fa_list_next(b))
        if (fa_block_size(b) >= size)
            goto found;
    return 0;
found:
    ix->rover = b;
    _fa_addr_list_set_rover(&ix->list, b);
    return b;
}

const struct fa_fit_policy _fa_policy_next = {"next", FA_INDEX_ADDRESS_TREE, false, find};

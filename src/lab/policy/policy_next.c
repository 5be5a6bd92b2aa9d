/* Next fit: first fit, but the search starts where the previous one ended and wraps once.
 *
 * "Where the previous one ended" is the heap's rover: the address of the block the previous
 * successful search chose (a grow leaves it alone). A search takes the lowest-addressed block
 * that fits at or after the rover, else the lowest-addressed one before it. The rover is an
 * address, not a block, so merges and splits never leave it dangling; both indexes follow the
 * same rule and so choose the same block.
 * Tree: two augmented descents, O(log n). List: walk from the cached rover node to the end, then
 * from the head up to it, O(n) at worst (the textbook next fit). */
#include "lab/heap/classic_heap.h"

static uintptr_t find_tree(fa_classic_heap *h, size_t size)
{
    uintptr_t b = _fa_tree_first_fit(&h->tree, h->rover, size);
    if (!b)
        b = _fa_tree_first_fit(&h->tree, 0, size); /* wrap: only blocks before the rover remain */
    if (b)
        h->rover = b;
    return b;
}

static uintptr_t find_list(fa_classic_heap *h, size_t size)
{
    uintptr_t start = fa_list_block(h->list.rover), b;
    for (b = start; b; b = fa_list_next(b))
        if (fa_block_size(b) >= size)
            goto found;
    for (b = _fa_addr_list_first(&h->list); b && b != start; b = fa_list_next(b))
        if (fa_block_size(b) >= size)
            goto found;
    return 0;
found:
    h->rover = b;
    _fa_addr_list_set_rover(&h->list, b);
    return b;
}

const struct fa_fit_policy _fa_policy_next_tree = {
    .name = "next",
    FA_ADDR_TREE_INDEX,
    .find = find_tree,
};

const struct fa_fit_policy _fa_policy_next_list = {
    .name = "next",
    FA_ADDR_LIST_INDEX,
    .find = find_list,
};

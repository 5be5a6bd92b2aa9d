/* Best fit: the smallest free block that fits, the lowest-addressed one among equals.
 * Tree: a lower bound in the tree ordered by (size, address), O(log n).
 * List: walk the whole address-ordered list (stopping early at an exact fit), O(n). */
#include "lab/heap/classic_heap.h"

static uintptr_t find_tree(fa_classic_heap *h, size_t size)
{
    return _fa_tree_lower_bound(&h->tree, size);
}

uintptr_t _fa_best_fit_in_list(const struct fa_addr_list *list, size_t size)
{
    uintptr_t best = 0;
    size_t best_size = 0;
    for (uintptr_t b = _fa_addr_list_first(list); b; b = fa_list_next(b)) {
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

static uintptr_t find_list(fa_classic_heap *h, size_t size)
{
    return _fa_best_fit_in_list(&h->list, size);
}

const struct fa_fit_policy _fa_policy_best_tree = {
    .name = "best",
    FA_SIZE_TREE_INDEX,
    .find = find_tree,
};

const struct fa_fit_policy _fa_policy_best_list = {
    .name = "best",
    FA_ADDR_LIST_INDEX,
    .find = find_list,
};

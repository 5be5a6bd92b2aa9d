/* The free-block indexes shared by several policies, as entries of their tables (fit_policy.h):
 * the address tree (first and next fit), the size tree (best and worst fit) and the address
 * list (every policy with FITALLOC_LAB_INDEX=list). */
#include "lab/heap/classic_heap.h"

/* ---- address tree ---- */

void _fa_index_addr_tree_init(fa_classic_heap *h)
{
    _fa_tree_init(&h->tree, FA_TREE_BY_ADDRESS);
}

void _fa_index_addr_tree_insert(fa_classic_heap *h, uintptr_t block)
{
    _fa_tree_insert(&h->tree, block);
}

void _fa_index_addr_tree_remove(fa_classic_heap *h, uintptr_t block)
{
    _fa_tree_remove(&h->tree, block);
}

void _fa_index_addr_tree_resized(fa_classic_heap *h, uintptr_t block, size_t old_size)
{
    (void)old_size;
    _fa_tree_size_changed(&h->tree, block);
}

void _fa_index_addr_tree_replace(fa_classic_heap *h, uintptr_t old_block, uintptr_t new_block)
{
    _fa_tree_replace(&h->tree, old_block, new_block);
}

/* ---- size tree ---- */

void _fa_index_size_tree_init(fa_classic_heap *h)
{
    _fa_tree_init(&h->tree, FA_TREE_BY_SIZE);
}

void _fa_index_size_tree_insert(fa_classic_heap *h, uintptr_t block)
{
    _fa_tree_insert(&h->tree, block);
}

void _fa_index_size_tree_remove(fa_classic_heap *h, uintptr_t block)
{
    _fa_tree_remove(&h->tree, block);
}

void _fa_index_size_tree_resized(fa_classic_heap *h, uintptr_t block, size_t old_size)
{
    (void)old_size;
    _fa_tree_size_changed(&h->tree, block);
}

void _fa_index_size_tree_replace(fa_classic_heap *h, uintptr_t old_block, uintptr_t new_block)
{
    /* The key is the size, which changed: the new block goes elsewhere in the tree. */
    _fa_tree_remove(&h->tree, old_block);
    _fa_tree_insert(&h->tree, new_block);
}

/* ---- either tree ---- */

void _fa_index_tree_visit(fa_classic_heap *h, void (*fn)(uintptr_t block, void *arg), void *arg)
{
    for (uintptr_t b = _fa_tree_first(&h->tree); b; b = _fa_tree_next(b))
        fn(b, arg);
}

void _fa_index_tree_check(fa_classic_heap *h)
{
    _fa_tree_check(&h->tree, h);
}

/* ---- address list ---- */

void _fa_index_addr_list_init(fa_classic_heap *h)
{
    h->list.head = h->list.rover = NULL;
    h->list.count = 0;
}

void _fa_index_addr_list_insert(fa_classic_heap *h, uintptr_t block)
{
    _fa_addr_list_insert(&h->list, block, h->rover);
}

void _fa_index_addr_list_remove(fa_classic_heap *h, uintptr_t block)
{
    _fa_addr_list_remove(&h->list, block);
}

void _fa_index_addr_list_resized(fa_classic_heap *h, uintptr_t block, size_t old_size)
{
    /* The address, the only key, did not change. */
    (void)h;
    (void)block;
    (void)old_size;
}

void _fa_index_addr_list_replace(fa_classic_heap *h, uintptr_t old_block, uintptr_t new_block)
{
    _fa_addr_list_replace(&h->list, old_block, new_block, h->rover);
}

void _fa_index_addr_list_visit(fa_classic_heap *h, void (*fn)(uintptr_t block, void *arg),
                               void *arg)
{
    for (uintptr_t b = _fa_addr_list_first(&h->list); b; b = fa_list_next(b))
        fn(b, arg);
}

void _fa_index_addr_list_check(fa_classic_heap *h)
{
    _fa_addr_list_check(&h->list, h, h->rover);
}

/* ---- the table of tables ---- */

const struct fa_fit_policy *_fa_fit_policy(enum fa_policy policy, enum fa_lab_index index)
{
    static const struct fa_fit_policy *const tables[][2] = {
        [FA_POLICY_FIRST] = {&_fa_policy_first_tree, &_fa_policy_first_list},
        [FA_POLICY_NEXT] = {&_fa_policy_next_tree, &_fa_policy_next_list},
        [FA_POLICY_BEST] = {&_fa_policy_best_tree, &_fa_policy_best_list},
        [FA_POLICY_WORST] = {&_fa_policy_worst_tree, &_fa_policy_worst_list},
        [FA_POLICY_SEGREGATED] = {&_fa_policy_segregated_tree, &_fa_policy_segregated_list},
    };
    if ((unsigned)policy > FA_POLICY_SEGREGATED)
        policy = FA_POLICY_BEST;
    return tables[policy][index == FA_LAB_INDEX_LIST];
}

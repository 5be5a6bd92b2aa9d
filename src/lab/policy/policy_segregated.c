/* Segregated fit, the ID1206 study's final allocator: exact-size lists for small blocks, best
 * fit for the others.
 *
 * Free blocks whose payload is at most cfg.exact_max bytes sit in one LIFO list per block size
 * (48, 64, ... in 16-byte steps); larger free blocks sit in a best-fit index (the size tree, or
 * the address list with FITALLOC_LAB_INDEX=list). A small request takes the head of its exact
 * list, O(1); when that list is empty, or the request is larger, it takes the best fit among
 * the larger blocks. Like the study, a small request never takes a small free block of another
 * size: those wait for a request of their own size or for a merge.
 */
#include "common/message.h"
#include "platform/arch.h"
#include "platform/compiler.h"
#include "platform/os.h"
#include "lab/heap/classic_heap.h"

static bool is_exact(const fa_classic_heap *h, size_t size)
{
    return size <= h->exact_max_block;
}

static struct fa_lifo_list *exact_list(fa_classic_heap *h, size_t size)
{
    return &h->exact[(size - FA_BLOCK_MIN) / FA_BLOCK_ALIGN];
}

/* Insert or remove `block` as a block of `size` bytes; `tree`: large blocks are in the size
 * tree, else in the address list. */
static void put(fa_classic_heap *h, uintptr_t block, size_t size, bool tree)
{
    if (is_exact(h, size))
        _fa_lifo_push(exact_list(h, size), block);
    else if (tree)
        _fa_tree_insert(&h->tree, block);
    else
        _fa_addr_list_insert(&h->list, block, h->rover);
}

static void take(fa_classic_heap *h, uintptr_t block, size_t size, bool tree)
{
    if (is_exact(h, size))
        _fa_lifo_remove(exact_list(h, size), block);
    else if (tree)
        _fa_tree_remove(&h->tree, block);
    else
        _fa_addr_list_remove(&h->list, block);
}

static uintptr_t find_exact(fa_classic_heap *h, size_t size)
{
    return is_exact(h, size) ? _fa_lifo_first(exact_list(h, size)) : 0;
}

static void visit_exact(fa_classic_heap *h, void (*fn)(uintptr_t block, void *arg), void *arg)
{
    for (size_t i = 0; i < h->exact_count; i++)
        for (uintptr_t b = _fa_lifo_first(&h->exact[i]); b; b = fa_list_next(b))
            fn(b, arg);
}

static void check_general_size(uintptr_t block, void *arg)
{
    fa_classic_heap *h = arg;
    if (is_exact(h, fa_block_size(block)))
        _fa_fatal("fitalloc: lab heap %p: segregated fit: small block %p in the large-block "
                  "index\n",
                  (void *)h, (void *)block);
}

static void check_exact(fa_classic_heap *h)
{
    for (size_t i = 0; i < h->exact_count; i++)
        _fa_lifo_check(&h->exact[i], h, FA_BLOCK_MIN + i * FA_BLOCK_ALIGN);
}

/* ---- large blocks in the size tree ---- */

static void insert_tree(fa_classic_heap *h, uintptr_t block)
{
    put(h, block, fa_block_size(block), true);
}

static void remove_tree(fa_classic_heap *h, uintptr_t block)
{
    take(h, block, fa_block_size(block), true);
}

static void resized_tree(fa_classic_heap *h, uintptr_t block, size_t old_size)
{
    take(h, block, old_size, true);
    put(h, block, fa_block_size(block), true);
}

static void replace_tree(fa_classic_heap *h, uintptr_t old_block, uintptr_t new_block)
{
    remove_tree(h, old_block);
    insert_tree(h, new_block);
}

static uintptr_t find_tree(fa_classic_heap *h, size_t size)
{
    uintptr_t b = find_exact(h, size);
    return b ? b : _fa_tree_lower_bound(&h->tree, size);
}

static void visit_tree(fa_classic_heap *h, void (*fn)(uintptr_t block, void *arg), void *arg)
{
    visit_exact(h, fn, arg);
    _fa_index_tree_visit(h, fn, arg);
}

static void check_tree(fa_classic_heap *h)
{
    check_exact(h);
    _fa_index_tree_check(h);
    _fa_index_tree_visit(h, check_general_size, h);
}

/* ---- large blocks in the address list ---- */

static void insert_list(fa_classic_heap *h, uintptr_t block)
{
    put(h, block, fa_block_size(block), false);
}

static void remove_list(fa_classic_heap *h, uintptr_t block)
{
    take(h, block, fa_block_size(block), false);
}

static void resized_list(fa_classic_heap *h, uintptr_t block, size_t old_size)
{
    take(h, block, old_size, false);
    put(h, block, fa_block_size(block), false);
}

static void replace_list(fa_classic_heap *h, uintptr_t old_block, uintptr_t new_block)
{
    remove_list(h, old_block);
    insert_list(h, new_block);
}

static uintptr_t find_list(fa_classic_heap *h, size_t size)
{
    uintptr_t b = find_exact(h, size);
    return b ? b : _fa_best_fit_in_list(&h->list, size);
}

static void visit_list(fa_classic_heap *h, void (*fn)(uintptr_t block, void *arg), void *arg)
{
    visit_exact(h, fn, arg);
    _fa_index_addr_list_visit(h, fn, arg);
}

static void check_list(fa_classic_heap *h)
{
    check_exact(h);
    _fa_index_addr_list_check(h);
    _fa_index_addr_list_visit(h, check_general_size, h);
}

const struct fa_fit_policy _fa_policy_segregated_tree = {
    .name = "segregated",
    .init = _fa_index_size_tree_init,
    .insert = insert_tree,
    .remove = remove_tree,
    .resized = resized_tree,
    .replace = replace_tree,
    .find = find_tree,
    .visit = visit_tree,
    .check = check_tree,
};

const struct fa_fit_policy _fa_policy_segregated_list = {
    .name = "segregated",
    .init = _fa_index_addr_list_init,
    .insert = insert_list,
    .remove = remove_list,
    .resized = resized_list,
    .replace = replace_list,
    .find = find_list,
    .visit = visit_list,
    .check = check_list,
};

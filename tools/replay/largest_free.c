/* The largest free block of a lab heap (largest_free.h). */
#include "largest_free.h"

/* Address order: some free block has at least `size` bytes. */
static bool address_tree_has(const fa_classic_heap *h, size_t size)
{
    return _fa_tree_first_fit(&h->index.tree, 0, size) != 0;
}

/* Bisection over block sizes (multiples of FA_BLOCK_ALIGN): `fits` always has a block that
 * large, `too_large` never. */
static size_t largest_in_address_tree(const fa_classic_heap *h)
{
    if (!h->index.tree.root)
        return 0;
    size_t fits = FA_BLOCK_MIN, too_large = h->brk - h->start + FA_BLOCK_ALIGN;
    while (too_large - fits > FA_BLOCK_ALIGN) {
        size_t mid = fits + ((too_large - fits) / 2 & ~(size_t)(FA_BLOCK_ALIGN - 1));
        if (address_tree_has(h, mid))
            fits = mid;
        else
            too_large = mid;
    }
    return fits;
}

static size_t largest_in_size_tree(const fa_classic_heap *h)
{
    uintptr_t last = _fa_tree_last(&h->index.tree);
    return last ? fa_block_size(last) : 0;
}

/* Segregated fit's exact lists hold the blocks of exactly FA_BLOCK_MIN + i * FA_BLOCK_ALIGN
 * bytes, all smaller than any block of its size tree. */
static size_t largest_in_exact_lists(const fa_classic_heap *h)
{
    for (size_t i = h->index.exact_count; i-- > 0;)
        if (h->index.exact[i].count)
            return FA_BLOCK_MIN + i * FA_BLOCK_ALIGN;
    return 0;
}

size_t lab_largest_free_block(fa_classic_heap *h)
{
    if (h->index.kind == FA_INDEX_TLSF)
        return _fa_tlsf_largest(h->index.tlsf);
    if (h->index.kind == FA_INDEX_BUDDY)
        return _fa_buddy_lists_largest(h->index.buddy);
    if (h->cfg.index != FA_LAB_INDEX_TREE || h->index.kind == FA_INDEX_SLAB) {
        size_t payload = _fa_classic_heap_largest_free(h);
        return payload ? payload + FA_BLOCK_HEADER : 0;
    }
    if (h->index.tree.order == FA_TREE_BY_ADDRESS)
        return largest_in_address_tree(h);
    size_t largest = largest_in_size_tree(h);
    return largest ? largest : largest_in_exact_lists(h);
}

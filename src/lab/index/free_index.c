/* The free-block index of a classic heap (free_index.h): each operation once, by kind. */
#include "lab/index/free_index.h"

#include "common/assert.h"
#include "common/message.h"

size_t _fa_index_storage_size(enum fa_index_kind kind)
{
    return kind == FA_INDEX_TLSF    ? sizeof(struct fa_tlsf)
           : kind == FA_INDEX_BUDDY ? sizeof(struct fa_buddy_lists)
           : kind == FA_INDEX_SLAB  ? sizeof(struct fa_slab_lists)
                                    : 0;
}

void _fa_index_init(struct fa_free_index *ix, enum fa_index_kind kind, struct fa_lifo_list *exact,
                    size_t exact_count, void *storage)
{
    FA_ASSERT(!_fa_index_storage_size(kind) == !storage);
    ix->kind = kind;
    _fa_tree_init(&ix->tree, kind == FA_INDEX_SIZE_TREE ? FA_TREE_BY_SIZE : FA_TREE_BY_ADDRESS);
    ix->list.head = ix->list.rover = NULL;
    ix->list.count = 0;
    ix->rover = 0;
    ix->exact = exact;
    ix->exact_count = exact_count;
    ix->exact_max_block = exact_count ? FA_BLOCK_MIN + (exact_count - 1) * FA_BLOCK_ALIGN : 0;
    ix->tlsf = kind == FA_INDEX_TLSF ? storage : NULL;
    ix->buddy = kind == FA_INDEX_BUDDY ? storage : NULL;
    ix->slab = kind == FA_INDEX_SLAB ? storage : NULL;
    if (ix->slab)
        _fa_slab_lists_init(ix->slab, 0, NULL, 0);
    if (ix->tlsf)
        _fa_tlsf_init(ix->tlsf);
    if (ix->buddy)
        _fa_buddy_lists_init(ix->buddy);
}

/* In or out as a block of `size` bytes. */
static void put(struct fa_free_index *ix, uintptr_t block, size_t size)
{
    struct fa_lifo_list *exact = fa_index_exact_list(ix, size);
    if (exact)
        _fa_lifo_push(exact, block);
    else if (ix->kind == FA_INDEX_TLSF)
        _fa_tlsf_insert(ix->tlsf, block);
    else if (ix->kind == FA_INDEX_BUDDY)
        _fa_buddy_lists_insert(ix->buddy, block);
    else if (ix->kind == FA_INDEX_SLAB)
        _fa_slab_lists_insert(ix->slab, block);
    else if (ix->kind == FA_INDEX_ADDRESS_LIST)
        _fa_addr_list_insert(&ix->list, block, ix->rover);
    else
        _fa_tree_insert(&ix->tree, block);
}

static void take(struct fa_free_index *ix, uintptr_t block, size_t size)
{
    struct fa_lifo_list *exact = fa_index_exact_list(ix, size);
    if (exact)
        _fa_lifo_remove(exact, block);
    else if (ix->kind == FA_INDEX_TLSF)
        _fa_tlsf_remove(ix->tlsf, block, size);
    else if (ix->kind == FA_INDEX_BUDDY)
        _fa_buddy_lists_remove(ix->buddy, block, size);
    else if (ix->kind == FA_INDEX_SLAB)
        _fa_slab_lists_remove(ix->slab, block);
    else if (ix->kind == FA_INDEX_ADDRESS_LIST)
        _fa_addr_list_remove(&ix->list, block);
    else
        _fa_tree_remove(&ix->tree, block);
}

void _fa_index_insert(struct fa_free_index *ix, uintptr_t block)
{
    FA_ASSERT(fa_block_is_free(block) && fa_block_size(block) % FA_BLOCK_ALIGN == 0);
    put(ix, block, fa_block_size(block));
}

void _fa_index_remove(struct fa_free_index *ix, uintptr_t block)
{
    take(ix, block, fa_block_size(block));
}

void _fa_index_resized(struct fa_free_index *ix, uintptr_t block, size_t old_size)
{
    /* The block may change lists. */
    if (ix->exact_count || ix->kind >= FA_INDEX_TLSF) {
        take(ix, block, old_size);
        put(ix, block, fa_block_size(block));
    } else if (ix->kind != FA_INDEX_ADDRESS_LIST) {
        _fa_tree_size_changed(&ix->tree, block); /* the list's only key, the address, stays */
    }
}

void _fa_index_replace(struct fa_free_index *ix, uintptr_t old_block, uintptr_t new_block)
{
    FA_ASSERT(new_block < old_block);
    /* Where the size is the key, the block leaves its place and takes another. */
    if (ix->exact_count || ix->kind == FA_INDEX_SIZE_TREE || ix->kind >= FA_INDEX_TLSF) {
        _fa_index_remove(ix, old_block);
        _fa_index_insert(ix, new_block);
    } else if (ix->kind == FA_INDEX_ADDRESS_LIST) {
        _fa_addr_list_replace(&ix->list, old_block, new_block, ix->rover);
    } else {
        _fa_tree_replace(&ix->tree, old_block, new_block);
    }
}

void _fa_index_visit(const struct fa_free_index *ix, void (*fn)(uintptr_t block, void *arg),
                     void *arg)
{
    for (size_t i = 0; i < ix->exact_count; i++)
        for (uintptr_t b = _fa_lifo_first(&ix->exact[i]); b; b = fa_list_next(b))
            fn(b, arg);
    if (ix->kind == FA_INDEX_TLSF) {
        _fa_tlsf_visit(ix->tlsf, fn, arg);
    } else if (ix->kind == FA_INDEX_BUDDY) {
        _fa_buddy_lists_visit(ix->buddy, fn, arg);
    } else if (ix->kind == FA_INDEX_SLAB) {
        _fa_slab_lists_visit(ix->slab, fn, arg);
    } else if (ix->kind == FA_INDEX_ADDRESS_LIST) {
        for (uintptr_t b = _fa_addr_list_first(&ix->list); b; b = fa_list_next(b))
            fn(b, arg);
    } else {
        for (uintptr_t b = _fa_tree_first(&ix->tree); b; b = _fa_tree_next(b))
            fn(b, arg);
    }
}

struct above_exact {
    const struct fa_free_index *ix;
    const void *heap;
};

static void check_above_exact(uintptr_t block, void *arg)
{
    const struct above_exact *a = arg;
    if (fa_block_size(block) <= a->ix->exact_max_block)
        _fa_fatal("fitalloc: lab heap %p: segregated fit: small block %p in the large-block "
                  "index\n",
                  a->heap, (void *)block);
}

void _fa_index_check(const struct fa_free_index *ix, const void *heap)
{
    for (size_t i = 0; i < ix->exact_count; i++)
        _fa_lifo_check(&ix->exact[i], heap, FA_BLOCK_MIN + i * FA_BLOCK_ALIGN);
    if (ix->kind == FA_INDEX_TLSF)
        _fa_tlsf_check(ix->tlsf, heap);
    else if (ix->kind == FA_INDEX_BUDDY)
        _fa_buddy_lists_check(ix->buddy, heap);
    else if (ix->kind == FA_INDEX_SLAB)
        _fa_slab_lists_check(ix->slab, heap);
    else if (ix->kind == FA_INDEX_ADDRESS_LIST)
        _fa_addr_list_check(&ix->list, heap, ix->rover);
    else
        _fa_tree_check(&ix->tree, heap);
    if (ix->exact_count) {
        /* Only the index of the kind: the exact lists' blocks were checked above. */
        struct fa_free_index rest = *ix;
        rest.exact_count = 0;
        struct above_exact a = {ix, heap};
        _fa_index_visit(&rest, check_above_exact, &a);
    }
}

uint64_t _fa_index_steps(const struct fa_free_index *ix)
{
    return ix->kind == FA_INDEX_TLSF ? ix->tlsf->steps : ix->tree.steps;
}

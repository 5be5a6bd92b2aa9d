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
#include "lab/policy/fit_policy.h"

static uintptr_t find(struct fa_free_index *ix, size_t size)
{
    struct fa_lifo_list *exact = fa_index_exact_list(ix, size);
    uintptr_t b = exact ? _fa_lifo_first(exact) : 0;
    return b ? b : _fa_best_fit(ix, size);
}

const struct fa_fit_policy _fa_policy_segregated = {"segregated", FA_INDEX_SIZE_TREE, true, find};

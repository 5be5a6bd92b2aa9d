/* TLSF, two-level segregated fit (Masmano et al., ECRTS 2004): good fit in O(1). The request
 * is rounded up to its list's next subrange and the first non-empty list from there on gives
 * its head (tlsf_index.h); free merges at once with both neighbours through the boundary tags,
 * as the classic heap always does. It keeps its own index whatever FITALLOC_LAB_INDEX says. */
#include "lab/policy/fit_policy.h"

static uintptr_t find(struct fa_free_index *ix, size_t size)
{
    return _fa_tlsf_find(ix->tlsf, size);
}

const struct fa_fit_policy _fa_policy_tlsf = {"tlsf", FA_INDEX_TLSF, false, find};

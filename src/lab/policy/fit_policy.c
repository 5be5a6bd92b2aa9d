/* The policies by option value, and the index kind each keeps (fit_policy.h). */
#include "lab/policy/fit_policy.h"

const struct fa_fit_policy *_fa_fit_policy(enum fa_policy policy)
{
    static const struct fa_fit_policy *const policies[] = {
        [FA_POLICY_FIRST] = &_fa_policy_first,
        [FA_POLICY_NEXT] = &_fa_policy_next,
        [FA_POLICY_BEST] = &_fa_policy_best,
        [FA_POLICY_WORST] = &_fa_policy_worst,
        [FA_POLICY_SEGREGATED] = &_fa_policy_segregated,
        [FA_POLICY_TLSF] = &_fa_policy_tlsf,
        [FA_POLICY_BUDDY] = &_fa_policy_buddy,
        [FA_POLICY_SLAB] = &_fa_policy_slab,
    };
    return (unsigned)policy >= FA_POLICY_COUNT ? &_fa_policy_best : policies[policy];
}

enum fa_index_kind _fa_fit_index_kind(const struct fa_fit_policy *policy, enum fa_lab_index index)
{
    /* TLSF's, the buddy's and the slab's lists are the policy itself: no list version. */
    if (policy->tree >= FA_INDEX_TLSF)
        return policy->tree;
    return index == FA_LAB_INDEX_LIST ? FA_INDEX_ADDRESS_LIST : policy->tree;
}

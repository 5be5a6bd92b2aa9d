/* Operation costs (op_cost.h). */
#include "op_cost.h"

static unsigned bucket_of(uint64_t ns)
{
    if (ns < (1u << OP_COST_EXACT_BITS))
        return (unsigned)ns;
    unsigned top = 63 - (unsigned)__builtin_clzll(ns); /* >= OP_COST_EXACT_BITS */
    unsigned sub = (unsigned)(ns >> (top - OP_COST_SUB_BITS)) & ((1u << OP_COST_SUB_BITS) - 1);
    return (1u << OP_COST_EXACT_BITS) + ((top - OP_COST_EXACT_BITS) << OP_COST_SUB_BITS) + sub;
}

/* The largest duration that falls in bucket b. */
static uint64_t bucket_top(unsigned b)
{
    if (b < (1u << OP_COST_EXACT_BITS))
        return b;
    unsigned rest = b - (1u << OP_COST_EXACT_BITS);
    unsigned top = OP_COST_EXACT_BITS + (rest >> OP_COST_SUB_BITS);
    uint64_t sub = rest & ((1u << OP_COST_SUB_BITS) - 1);
    uint64_t low = ((uint64_t)1 << top) | (sub << (top - OP_COST_SUB_BITS));
    return low + ((uint64_t)1 << (top - OP_COST_SUB_BITS)) - 1;
}

void op_cost_add(struct op_cost *c, uint64_t ns)
{
    c->count++;
    c->total_ns += ns;
    c->bucket[bucket_of(ns)]++;
}

double op_cost_mean(const struct op_cost *c)
{
    return c->count ? (double)c->total_ns / (double)c->count : 0.0;
}

uint64_t op_cost_p99(const struct op_cost *c)
{
    if (!c->count)
        return 0;
    /* The rank of the 99th percentile, rounded up: ceil(0.99 * count). */
    uint64_t rank = c->count - c->count / 100;
    uint64_t seen = 0;
    for (unsigned b = 0; b < OP_COST_BUCKETS; b++) {
        seen += c->bucket[b];
        if (seen >= rank)
            return bucket_top(b);
    }
    return bucket_top(OP_COST_BUCKETS - 1);
}

/* The cost of one operation: clock_gettime around each call into the heap, kept as a sum (the
 * mean) and a histogram (the 99th percentile) instead of one value per operation, so that
 * millions of operations need a few kilobytes. The histogram is exact below EXACT_NS and has
 * SUB_BUCKETS buckets per power of two above (a bucket is at most 1/32 = 3 % wide).
 */
#ifndef FA_REPLAY_OP_COST_H
#define FA_REPLAY_OP_COST_H

#include <stdint.h>
#include <time.h>

#define OP_COST_EXACT_BITS 10 /* exact nanoseconds below 1024 */
#define OP_COST_SUB_BITS 5    /* 32 buckets per power of two above */
#define OP_COST_BUCKETS                                                                            \
    ((1 << OP_COST_EXACT_BITS) + (64 - OP_COST_EXACT_BITS) * (1 << OP_COST_SUB_BITS))

struct op_cost {
    uint64_t count, total_ns;
    uint64_t bucket[OP_COST_BUCKETS];
};

static inline uint64_t op_cost_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void op_cost_add(struct op_cost *c, uint64_t ns);
double op_cost_mean(const struct op_cost *c);
/* The smallest duration that at least 99 % of the operations do not exceed, to the bucket's
 * width (its upper end); 0 when nothing was counted. */
uint64_t op_cost_p99(const struct op_cost *c);

#endif

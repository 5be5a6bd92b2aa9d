/* The ID1206 seminar workload (workloads.md 4.2) on a fixed 64 KiB arena: without merging the
 * arena runs out after a few thousand steps with most of it still free, in small pieces; with
 * merging it never runs out.
 *
 * The study's first implementation (no merging, one free list searched from where it was last
 * changed) is the lab's next fit without coalescing; its final one is segregated fit (exact
 * lists up to 80 bytes) with coalescing. Segregated fit without coalescing does not run out on
 * this workload: its exact lists and best fit above 80 bytes hand each freed block to the next
 * request of the same size, so blocks are not chipped smaller (docs/lab.md); its free list is
 * still several times longer than with merging.
 *
 * Request sizes follow the study's rand.c with MAX 256, MIN 8 and glibc rand(): log-uniform,
 * small requests dominate. Each step picks a random slot of a buffer: frees it if it holds a
 * block, else allocates into it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lab/threads/lab_instance.h"
#include "check.h"
#include "exp_series.h"

#define ARENA 65536
#define MAX 256
#define MIN 8
#define LN_MAX_OVER_MIN 3.4657359027997265 /* ln 32 */

/* The study's request(): r uniform on a 1e-4 grid of [0, ln(MAX/MIN)), size MAX / e^r. */
static size_t request(void)
{
    double r = (double)(rand() % (int)(LN_MAX_OVER_MIN * 10000)) / 10000;
    return (size_t)((double)MAX / exp_series(r));
}

struct outcome {
    long failed_at; /* loop of the first failed allocation, -1 if none */
    size_t failed_size;
    int failed_errno;
    struct fa_lab_stats stats;
};

static struct outcome run(enum fa_policy policy, bool coalesce, unsigned buffer, long loops,
                          unsigned seed)
{
    struct fa_lab_config cfg = {
        .heap = {.policy = policy,
                 .index = FA_LAB_INDEX_TREE,
                 .coalesce = coalesce,
                 .arena = ARENA,
                 .exact_max = 80},
        .lock = FA_LOCK_GLOBAL,
    };
    struct fa_lab *lab = _fa_lab_instance_create(&cfg);
    CHECK(lab != NULL);
    static void *slot[1000];
    memset(slot, 0, sizeof slot);
    struct outcome out = {.failed_at = -1};
    srand(seed);
    for (long loop = 0; loop < loops; loop++) {
        unsigned i = (unsigned)rand() % buffer;
        if (slot[i]) {
            _fa_lab_instance_free(lab, slot[i], "free");
            slot[i] = NULL;
            continue;
        }
        size_t n = request();
        CHECK(n >= MIN && n <= MAX);
        errno = 0;
        slot[i] = _fa_lab_instance_alloc(lab, 0, n);
        if (!slot[i]) {
            out.failed_at = loop;
            out.failed_size = n;
            out.failed_errno = errno;
            break;
        }
        *(int *)slot[i] = 123;
    }
    CHECK_EQ(_fa_lab_instance_check(lab), 1);
    _fa_lab_instance_stats(lab, &out.stats);
    CHECK_EQ(out.stats.heap_bytes, ARENA); /* obtained once, never grown */
    CHECK_EQ(out.stats.grows, 0);
    _fa_lab_instance_destroy(lab);
    return out;
}

static void print(const char *what, unsigned buffer, unsigned seed, const struct outcome *o)
{
    const struct fa_lab_stats *s = &o->stats;
    printf("  %-22s buffer %u seed %u: ", what, buffer, seed);
    if (o->failed_at >= 0)
        printf("out of memory at loop %ld (%zu bytes), ", o->failed_at, o->failed_size);
    printf("%llu frees, free list %llu, %llu bytes free, largest %llu\n",
           (unsigned long long)s->frees, (unsigned long long)s->free_blocks,
           (unsigned long long)s->free_bytes, (unsigned long long)s->largest_free);
}

int main(void)
{
    long loops = (FA_TEST_SANITIZED ? 5000 : 20000) * (long)fa_test_scale();
    unsigned seeds = FA_TEST_SANITIZED ? 1 : 3;
    for (unsigned buffer = 100; buffer <= 300; buffer += 100) {
        for (unsigned seed = 1; seed <= seeds; seed++) {
            /* The first implementation: runs out early, most of the arena free in pieces
             * too small for the request, and most frees ended up on the free list. */
            struct outcome first = run(FA_POLICY_NEXT, false, buffer, loops, seed);
            const struct fa_lab_stats *s = &first.stats;
            print("next fit, no merging", buffer, seed, &first);
            CHECK_SGE(first.failed_at, 0);
            CHECK_LT(first.failed_at, 10000);
            CHECK_EQ(first.failed_errno, ENOMEM);
            CHECK_GT(s->free_bytes, ARENA / 2);
            CHECK_LT(s->largest_free, first.failed_size);
            CHECK_GT(2 * s->free_blocks, s->frees);
            CHECK_EQ(s->coalesces, 0);

            /* The same with merging: never runs out. */
            struct outcome merged = run(FA_POLICY_NEXT, true, buffer, loops, seed);
            CHECK_SEQ(merged.failed_at, -1);
            CHECK_GT(merged.stats.coalesces, 0);

            /* The final implementation: never runs out, a short free list holding most of the
             * arena. */
            struct outcome final = run(FA_POLICY_SEGREGATED, true, buffer, loops, seed);
            s = &final.stats;
            print("segregated, merging", buffer, seed, &final);
            CHECK_SEQ(final.failed_at, -1);
            CHECK_GT(s->coalesces, 0);
            CHECK_LT(s->free_blocks, 50);
            CHECK_GT(s->free_bytes, ARENA / 2);

            /* Segregated fit without merging: no run-out here, but a fragmented arena. */
            struct outcome unmerged = run(FA_POLICY_SEGREGATED, false, buffer, loops, seed);
            print("segregated, no merging", buffer, seed, &unmerged);
            CHECK_SEQ(unmerged.failed_at, -1);
            CHECK_GT(unmerged.stats.free_blocks, 3 * final.stats.free_blocks);
        }
    }
    printf("lab/arena_id1206: ok\n");
    return 0;
}

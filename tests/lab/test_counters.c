/* Exact statistics on scripted sequences: mallocs, frees, reuses, grows, splits, coalesces,
 * blocks, requested, max heap, free blocks and bytes; and the CSE3320 benchmark (50 MB
 * variant, workloads.md 3.4), whose policy-independent counters the study printed. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "lab_test.h"

static fa_classic_heap *make_heap(enum fa_policy policy, enum fa_lab_index index, bool coalesce)
{
    return lab_test_heap(policy, index, coalesce, (size_t)256 << 20);
}

static void *alloc(fa_classic_heap *h, size_t n)
{
    void *p = _fa_classic_heap_alloc(h, n);
    CHECK(p != NULL);
    _fa_classic_heap_check(h);
    return p;
}

static void release(fa_classic_heap *h, void *p)
{
    _fa_classic_heap_free(h, p, "free");
    _fa_classic_heap_check(h);
}

#define EXPECT(h, field, value) CHECK_EQ((h)->count.field, (value))

/* The six event counters, in the order the classic studies print them. */
static void expect_events(const fa_classic_heap *h, uint64_t mallocs, uint64_t frees,
                          uint64_t reuses, uint64_t grows, uint64_t splits, uint64_t coalesces)
{
    EXPECT(h, mallocs, mallocs);
    EXPECT(h, frees, frees);
    EXPECT(h, reuses, reuses);
    EXPECT(h, grows, grows);
    EXPECT(h, splits, splits);
    EXPECT(h, coalesces, coalesces);
}

/* test3: 1200 + 1200 (blocks of 1216), both freed and merged, 2048 (block 2064) split off. */
static void test_test3(enum fa_policy policy, enum fa_lab_index index)
{
    fa_classic_heap *h = make_heap(policy, index, true);
    void *a = alloc(h, 1200), *b = alloc(h, 1200);
    release(h, a);
    release(h, b);
    alloc(h, 2048);
    expect_events(h, 3, 2, 1, 2, 1, 1);
    EXPECT(h, blocks, 2);
    EXPECT(h, requested, 1200 + 1200 + 2048);
    EXPECT(h, granted, 1200 + 1200 + 2048); /* multiples of 16: no internal fragmentation */
    EXPECT(h, payload_grown, 2 * 1200);
    EXPECT(h, heap_bytes, 2 * 1216);
    EXPECT(h, free_blocks, 1);
    EXPECT(h, free_size, 2 * 1216 - 2064);
    CHECK_EQ(_fa_classic_heap_largest_free(h), 2 * 1216 - 2064 - 16);
    _fa_classic_heap_destroy(h);
}

/* test4: 2048 freed, 1024 reuses and splits it. */
static void test_test4(enum fa_policy policy, enum fa_lab_index index)
{
    fa_classic_heap *h = make_heap(policy, index, true);
    release(h, alloc(h, 2048));
    alloc(h, 1024);
    expect_events(h, 2, 1, 1, 1, 1, 0);
    EXPECT(h, granted, 2048 + 1024);
    EXPECT(h, class_mallocs[11], 1); /* the 2064-byte block */
    EXPECT(h, class_mallocs[10], 1); /* the 1040-byte one */
    EXPECT(h, blocks, 2);
    EXPECT(h, requested, 3072);
    EXPECT(h, payload_grown, 2048);
    EXPECT(h, heap_bytes, 2064);
    _fa_classic_heap_destroy(h);
}

/* ffnf: nine grows, three isolated holes, two exact reuses, nothing split or merged. */
static void test_ffnf(enum fa_policy policy, enum fa_lab_index index)
{
    fa_classic_heap *h = make_heap(policy, index, true);
    static const size_t sizes[9] = {1000, 1, 10, 1, 6000, 1, 10, 1, 1000};
    void *p[9];
    size_t requested = 0, grown = 0;
    for (int i = 0; i < 9; i++) {
        p[i] = alloc(h, sizes[i]);
        requested += sizes[i];
        grown += fa_block_size_for(sizes[i]) - FA_BLOCK_HEADER;
    }
    release(h, p[0]);
    release(h, p[4]);
    release(h, p[8]);
    alloc(h, 6000);
    alloc(h, 1000);
    expect_events(h, 11, 3, 2, 9, 0, 0);
    EXPECT(h, blocks, 9);
    EXPECT(h, free_blocks, 1);
    EXPECT(h, requested, requested + 7000);
    EXPECT(h, payload_grown, grown);
    _fa_classic_heap_destroy(h);
}

/* A block freed between two free neighbours merges with both: two coalesces, one block. */
static void test_three_way_merge(enum fa_policy policy, enum fa_lab_index index, bool coalesce)
{
    fa_classic_heap *h = make_heap(policy, index, coalesce);
    void *x = alloc(h, 100), *y = alloc(h, 100), *z = alloc(h, 100);
    alloc(h, 1);
    release(h, x);
    release(h, z);
    release(h, y);
    EXPECT(h, coalesces, coalesce ? 2 : 0);
    EXPECT(h, free_blocks, coalesce ? 1 : 3);
    EXPECT(h, blocks, coalesce ? 2 : 4);
    EXPECT(h, free_size, 3 * 128);
    /* The merged block serves 300 bytes in place of the three. */
    void *p = alloc(h, 300);
    if (coalesce)
        CHECK(p == x);
    else
        CHECK((char *)p > (char *)z);
    /* realloc does not grow into a free neighbour when merging is off. */
    void *q = alloc(h, 100), *r = alloc(h, 100);
    alloc(h, 1);
    release(h, r);
    CHECK_EQ(_fa_classic_heap_resize(h, q, 200), coalesce);
    _fa_classic_heap_destroy(h);
}

/* The break grows by extending a free last block instead of appending a new one. */
static void test_grow_extends_last(enum fa_policy policy, enum fa_lab_index index)
{
    fa_classic_heap *h = make_heap(policy, index, true);
    void *a = alloc(h, 100);
    release(h, a);
    void *b = alloc(h, 1000);
    CHECK(b == a);
    EXPECT(h, grows, 2);
    EXPECT(h, reuses, 0);
    EXPECT(h, blocks, 1);
    EXPECT(h, heap_bytes, 1024);
    EXPECT(h, payload_grown, 1024 - 16);
    _fa_classic_heap_destroy(h);
}

/* realloc in place: growing into a free neighbour (a merge), shrinking (a split), growing the
 * last block past the break (a grow). */
static void test_resize(enum fa_policy policy, enum fa_lab_index index)
{
    fa_classic_heap *h = make_heap(policy, index, true);
    char *p = alloc(h, 100);
    void *q = alloc(h, 100);
    alloc(h, 1);
    memset(p, 7, 100);
    release(h, q);
    CHECK(_fa_classic_heap_resize(h, p, 200)); /* 128 + 128 >= 224: in place, no split */
    _fa_classic_heap_check(h);
    CHECK_EQ(_fa_classic_heap_usable(h, p, "test"), 256 - 16);
    CHECK_BYTES(p, 100, 7);
    EXPECT(h, coalesces, 1);
    EXPECT(h, blocks, 2);
    EXPECT(h, free_blocks, 0);
    CHECK(_fa_classic_heap_resize(h, p, 50)); /* 256 -> 80: 176 split off */
    _fa_classic_heap_check(h);
    EXPECT(h, splits, 1);
    EXPECT(h, free_blocks, 1);
    EXPECT(h, free_size, 176);
    CHECK(!_fa_classic_heap_resize(h, p, 1000)); /* the free neighbour is too small */
    char *top = alloc(h, 500);                   /* no free block fits: appended at the break */
    uint64_t grows = h->count.grows;
    CHECK(_fa_classic_heap_resize(h, top, 100000)); /* the last block: the break moves */
    _fa_classic_heap_check(h);
    EXPECT(h, grows, grows + 1);
    memset(top, 1, 100000);
    _fa_classic_heap_destroy(h);
}

/* Arena mode: one free block spans the arena from the start; nothing ever grows. */
static void test_arena(enum fa_policy policy, enum fa_lab_index index)
{
    struct fa_classic_heap_config cfg = {
        .policy = policy, .index = index, .coalesce = true, .arena = 65536, .exact_max = 80};
    fa_classic_heap *h = _fa_classic_heap_create(&cfg, 0);
    CHECK(h != NULL);
    EXPECT(h, blocks, 1);
    EXPECT(h, free_blocks, 1);
    EXPECT(h, heap_bytes, 65536);
    EXPECT(h, payload_grown, 65536 - 16);
    void *p = alloc(h, 100);
    EXPECT(h, reuses, 1);
    EXPECT(h, splits, 1);
    EXPECT(h, grows, 0);
    CHECK(_fa_classic_heap_alloc(h, 65536) == NULL);
    if (policy == FA_POLICY_TLSF) {
        /* Good fit rounds a request up to the next subrange: the rest (65408 bytes, in the
         * list of [63488, 65536)) does not serve a request of its own size, but serves one of
         * 63488 bytes, the start of its subrange, and the 1920 left over (a subrange start
         * too) serve the next. */
        CHECK(_fa_classic_heap_alloc(h, 65536 - 128 - 16) == NULL);
        CHECK(_fa_classic_heap_alloc(h, 63488 - 16) != NULL);
        CHECK(_fa_classic_heap_alloc(h, 1920 - 16) != NULL);
    } else {
        CHECK(_fa_classic_heap_alloc(h, 65536 - 128 - 16) != NULL); /* exactly the rest */
    }
    CHECK(_fa_classic_heap_alloc(h, 1) == NULL);
    EXPECT(h, free_blocks, 0);
    release(h, p);
    EXPECT(h, heap_bytes, 65536);
    _fa_classic_heap_destroy(h);
}

/* The CSE3320 benchmark, portable variant (p1 = 50 000 000 bytes, no stdio buffer). */
struct cse_result {
    struct fa_classic_heap_counters c;
};

static struct cse_result run_cse3320(enum fa_policy policy, enum fa_lab_index index)
{
    static void *A[14000], *B[10000];
    fa_classic_heap *h = make_heap(policy, index, true);
#define M(n) _fa_classic_heap_alloc(h, (n))
#define F(p) _fa_classic_heap_free(h, (p), "free")
    void *p1 = M(50000000), *p2 = M(1024), *p3 = M(35);
    CHECK(p1 && p2 && p3);
    F(p1);
    int j = 0;
    for (int i = 0; i < 14000; i++) {
        A[i] = M(1024);
        CHECK(A[i] != NULL);
        if (i % 10 == 0 && i > 0) {
            F(A[i]);
            B[j++] = M(100);
        }
    }
    void *p4 = M(10);
    F(p4);
    void *p5 = M(1);
    F(p5);
    for (int k = 0; k < 10000; k++) {
        if (k % 10 != 0)
            F(A[k]);
        else
            CHECK(M(150) != NULL);
    }
    for (int m = 0; m < j; m++)
        F(B[m]);
    F(p2);
#undef M
#undef F
    _fa_classic_heap_check(h);
    struct cse_result r = {h->count};
    _fa_classic_heap_destroy(h);
    return r;
}

static void test_cse3320(void)
{
    for (int policy = 0; policy < FA_POLICY_COUNT; policy++) {
        struct cse_result tree = run_cse3320(policy, FA_LAB_INDEX_TREE);
        struct cse_result list = run_cse3320(policy, FA_LAB_INDEX_LIST);
        const struct fa_classic_heap_counters *c = &tree.c;
        /* The study's counts less the stdio buffer's malloc (never freed); the same for every
         * policy. */
        CHECK_EQ(c->mallocs, 16404);
        CHECK_EQ(c->frees, 11802);
        CHECK_EQ(c->requested,
                 50000000ull + 1024 + 35 + 14000 * 1024 + 1399 * 100 + 10 + 1 + 1000 * 150);
        CHECK(memcmp(&tree.c, &list.c, sizeof tree.c) == 0);
        if (policy >= FA_POLICY_BUDDY) /* the rest is the boundary-tag layout's, not buddy's
                                           or slab's */
            continue;
        CHECK_EQ(c->grows, 3);
        CHECK_EQ(c->reuses, 16401); /* every other malloc reuses a free block */
        CHECK_EQ(c->requested,
                 50000000ull + 1024 + 35 + 14000 * 1024 + 1399 * 100 + 10 + 1 + 1000 * 150);
        CHECK_EQ(c->payload_grown, 50000000ull + 1024 + 48); /* 35 bytes use a 48-byte payload */
        /* Without extensions of a free last block: blocks = grows + splits - coalesces. */
        CHECK_EQ(c->blocks, c->grows + c->splits - c->coalesces);
        CHECK_LE(c->splits, c->reuses);
        /* Our layout's values; they agree with the study's reference model (workloads.md 3.4):
         * 419 free blocks under first fit, 11 401 coalesces under worst fit, next fit = worst. */
        bool spreads = policy == FA_POLICY_NEXT || policy == FA_POLICY_WORST;
        CHECK_EQ(c->splits, spreads ? 16401 : 16383);
        CHECK_EQ(c->coalesces, spreads ? 11401 : 11365);
        CHECK_EQ(c->blocks, spreads ? 5003 : 5021);
        CHECK_EQ(c->free_blocks, spreads ? 401 : 419);
        /* Both indexes make the same choices, so every counter agrees. */
        CHECK(memcmp(&tree.c, &list.c, sizeof tree.c) == 0);
        printf("  cse3320 %-10s splits %llu coalesces %llu blocks %llu free blocks %llu\n",
               (const char *[]){"first", "next", "best", "worst", "segregated", "tlsf", "buddy",
                                "slab"}[policy],
               (unsigned long long)c->splits, (unsigned long long)c->coalesces,
               (unsigned long long)c->blocks, (unsigned long long)c->free_blocks);
    }
}

int main(void)
{
    for (int index = 0; index < 2; index++) {
        for (int policy = 0; policy < FA_POLICY_COUNT; policy++) {
            if (policy >= FA_POLICY_BUDDY) /* their layouts' counts: test_policies.c */
                continue;
            test_test3(policy, index);
            test_test4(policy, index);
            if (policy != FA_POLICY_TLSF) /* exact reuses: TLSF's are in test_policies.c */
                test_ffnf(policy, index);
            test_three_way_merge(policy, index, true);
            test_three_way_merge(policy, index, false);
            test_grow_extends_last(policy, index);
            test_resize(policy, index);
            test_arena(policy, index);
        }
    }
    test_cse3320();
    printf("lab/counters: ok\n");
    return 0;
}

/* Scripted scenarios where each placement policy must pick a known block: the CSE3320 ffnf and
 * bfwf tests, test3 (coalesce then reuse), test4 (split and reuse), the KTH seminar's test.c,
 * and a few of our own (best versus first, next fit's wrap, segregated fit's exact lists,
 * aligned blocks). Every scenario runs on both indexes (tree and list). */
#include <stdint.h>
#include <string.h>

#include "lab/heap/classic_heap.h"
#include "check.h"

static const char *const policy_name[] = {"first", "next", "best", "worst", "segregated"};

static fa_classic_heap *make_heap(enum fa_policy policy, enum fa_lab_index index)
{
    struct fa_classic_heap_config cfg = {
        .policy = policy, .index = index, .coalesce = true, .arena = 0, .exact_max = 128};
    fa_classic_heap *h = _fa_classic_heap_create(&cfg, (size_t)64 << 20);
    CHECK(h != NULL);
    return h;
}

static void *alloc(fa_classic_heap *h, size_t n)
{
    void *p = _fa_classic_heap_alloc(h, n);
    CHECK(p != NULL);
    CHECK_ALIGNED(p, 16);
    memset(p, 0x5a, n);
    _fa_classic_heap_check(h);
    return p;
}

static void release(fa_classic_heap *h, void *p)
{
    _fa_classic_heap_free(h, p, "free");
    _fa_classic_heap_check(h);
}

/* CSE3320 ffnf: holes of 1000, 6000 and 1000 bytes kept apart by 1-byte blocks; 6000 takes the
 * middle hole, then 1000 goes to ptr1's hole under first fit, ptr3's under next fit. */
static void test_ffnf(enum fa_policy policy, enum fa_lab_index index)
{
    fa_classic_heap *h = make_heap(policy, index);
    void *ptr1 = alloc(h, 1000);
    alloc(h, 1);
    alloc(h, 10); /* ptr6 */
    alloc(h, 1);
    void *ptr2 = alloc(h, 6000);
    alloc(h, 1);
    alloc(h, 10); /* ptr7 */
    alloc(h, 1);
    void *ptr3 = alloc(h, 1000);
    release(h, ptr1);
    release(h, ptr2);
    release(h, ptr3);
    void *p6000 = alloc(h, 6000);
    CHECK_MSG(p6000 == ptr2, "%s: 6000 bytes did not take the 6000-byte hole", policy_name[policy]);
    void *p1000 = alloc(h, 1000);
    void *expected = policy == FA_POLICY_NEXT ? ptr3 : ptr1; /* ties go to the lowest address */
    CHECK_MSG(p1000 == expected, "%s/%s: malloc(1000) = %p, expected %p (ptr1 %p, ptr3 %p)",
              policy_name[policy], index ? "list" : "tree", p1000, expected, ptr1, ptr3);
    _fa_classic_heap_destroy(h);
}

/* CSE3320 bfwf: holes of 65535 and 6000 bytes; 1000 bytes go to ptr2's (best) or ptr1's (worst). */
static void test_bfwf(enum fa_policy policy, enum fa_lab_index index)
{
    fa_classic_heap *h = make_heap(policy, index);
    void *ptr1 = alloc(h, 65535);
    alloc(h, 1);
    alloc(h, 65); /* ptr4 */
    alloc(h, 1);
    void *ptr2 = alloc(h, 6000);
    release(h, ptr1);
    release(h, ptr2);
    void *p = alloc(h, 1000);
    bool smallest = policy == FA_POLICY_BEST || policy == FA_POLICY_SEGREGATED;
    CHECK_MSG(p == (smallest ? ptr2 : ptr1), "%s/%s: malloc(1000) = %p (ptr1 %p, ptr2 %p)",
              policy_name[policy], index ? "list" : "tree", p, ptr1, ptr2);
    _fa_classic_heap_destroy(h);
}

/* CSE3320 test3: two neighbours freed merge, and 2048 bytes fit in the merged 2 x 1200. */
static void test_coalesce_then_reuse(enum fa_policy policy, enum fa_lab_index index)
{
    fa_classic_heap *h = make_heap(policy, index);
    void *a = alloc(h, 1200);
    void *b = alloc(h, 1200);
    release(h, a);
    release(h, b);
    CHECK_EQ(h->count.free_blocks, 1);
    void *c = alloc(h, 2048);
    CHECK_MSG(c == a, "%s: merged space not reused", policy_name[policy]);
    _fa_classic_heap_destroy(h);
}

/* CSE3320 test4: a freed 2048 block serves 1024 bytes, split. */
static void test_split_and_reuse(enum fa_policy policy, enum fa_lab_index index)
{
    fa_classic_heap *h = make_heap(policy, index);
    void *p = alloc(h, 2048);
    release(h, p);
    void *q = alloc(h, 1024);
    CHECK(q == p);
    CHECK_EQ(h->count.splits, 1);
    CHECK_EQ(h->count.free_blocks, 1);
    CHECK_EQ(_fa_classic_heap_largest_free(h), 2064 - 1040 - 16);
    _fa_classic_heap_destroy(h);
}

/* KTH seminar test.c: 1024 freed and asked again comes back at the same address; 1025 (rounded
 * up) does not fit in a freed 1024-byte block. */
static void test_kth(enum fa_policy policy, enum fa_lab_index index)
{
    fa_classic_heap *h = make_heap(policy, index);
    char *a = alloc(h, 1024);
    release(h, a);
    char *b = alloc(h, 1024);
    CHECK(b == a);
    char *c = alloc(h, 1024);
    CHECK(c != b);
    release(h, b);
    char *d = alloc(h, 1025);
    CHECK_MSG(d + 1025 <= b || d >= b + 1024, "%s: 1025 bytes placed in a 1024-byte hole",
              policy_name[policy]);
    CHECK_GE(_fa_classic_heap_usable(h, d, "test"), 1025);
    _fa_classic_heap_destroy(h);
}

/* Holes of 300, 100 and 200 bytes in address order; 90 bytes go to the first hole (first,
 * next: the rover is at the start), the 100 (best) or the 300 (worst). Segregated fit takes the
 * 200: the 100-byte hole sits in another exact list (payload 112 <= 128), and among the larger
 * blocks the 200 fits best. */
static void test_three_holes(enum fa_policy policy, enum fa_lab_index index)
{
    fa_classic_heap *h = make_heap(policy, index);
    void *h300 = alloc(h, 300);
    alloc(h, 1);
    void *h100 = alloc(h, 100);
    alloc(h, 1);
    void *h200 = alloc(h, 200);
    alloc(h, 1);
    release(h, h300);
    release(h, h100);
    release(h, h200);
    void *p = alloc(h, 90);
    void *expected = policy == FA_POLICY_BEST ? h100 : policy == FA_POLICY_SEGREGATED ? h200 : h300;
    CHECK_MSG(p == expected, "%s/%s: malloc(90) = %p, expected %p", policy_name[policy],
              index ? "list" : "tree", p, expected);
    _fa_classic_heap_destroy(h);
}

/* Next fit resumes after the block it chose last, and wraps once to the start. */
static void test_next_fit_rover(enum fa_lab_index index)
{
    fa_classic_heap *h = make_heap(FA_POLICY_NEXT, index);
    void *hole[3];
    for (int i = 0; i < 3; i++) {
        hole[i] = alloc(h, 100);
        alloc(h, 1);
    }
    for (int i = 0; i < 3; i++)
        release(h, hole[i]);
    /* Each search starts at the previous choice, which is used now: the next hole. */
    for (int i = 0; i < 3; i++)
        CHECK(alloc(h, 100) == hole[i]);
    /* The rover is at hole 2. First fit would take hole 0 now; next fit starts at the rover
     * (inclusive, like K&R's malloc), then wraps once to the start. */
    release(h, hole[0]);
    release(h, hole[2]);
    CHECK(alloc(h, 100) == hole[2]);
    CHECK(alloc(h, 100) == hole[0]);
    /* Nothing free at all now: the heap grows. */
    CHECK_EQ(h->count.free_blocks, 0);
    void *top = alloc(h, 100);
    CHECK((char *)top > (char *)hole[2]);
    _fa_classic_heap_destroy(h);
}

/* Segregated fit: exact lists are LIFO; a small request never takes a small block of another
 * size; exact lists stop at exact_max (128 here). */
static void test_segregated(enum fa_lab_index index)
{
    fa_classic_heap *h = make_heap(FA_POLICY_SEGREGATED, index);
    void *x = alloc(h, 64);
    alloc(h, 1);
    void *y = alloc(h, 64);
    alloc(h, 1);
    void *z = alloc(h, 48);
    alloc(h, 1);
    void *big = alloc(h, 144); /* payload 144 > 128: goes to the best-fit part when freed */
    alloc(h, 1);
    release(h, x);
    release(h, y);
    release(h, z);
    CHECK(alloc(h, 64) == y); /* last in, first out */
    CHECK(alloc(h, 64) == x);
    /* 64 bytes again: its list is empty; z (48) is smaller anyway, the 144 block is the only
     * large one: best fit there. */
    release(h, big);
    void *p = alloc(h, 64);
    CHECK(p == big);
    /* 33 bytes want a 48-byte payload: z's list. */
    CHECK(alloc(h, 33) == z);
    /* A small request whose list is empty does not take a bigger small block. */
    void *w = alloc(h, 96);
    alloc(h, 1);
    release(h, w);
    void *v = alloc(h, 80);
    CHECK(v != w);
    _fa_classic_heap_destroy(h);
}

/* Aligned blocks: aligned, writable, and the gap in front goes back to the heap. */
static void test_aligned(enum fa_policy policy, enum fa_lab_index index)
{
    fa_classic_heap *h = make_heap(policy, index);
    void *keep[40];
    int k = 0;
    for (size_t align = 32; align <= 8192; align *= 2) {
        for (size_t n = 1; n < 3000; n = n * 3 + 7) {
            void *p = _fa_classic_heap_alloc_aligned(h, align, n);
            CHECK(p != NULL);
            CHECK_ALIGNED(p, align);
            CHECK_GE(_fa_classic_heap_usable(h, p, "test"), n);
            memset(p, 0xa5, n);
            _fa_classic_heap_check(h);
            if (k < 40 && n % 2)
                keep[k++] = p;
            else
                release(h, p);
        }
    }
    while (k > 0)
        release(h, keep[--k]);
    CHECK_EQ(h->count.mallocs, h->count.frees);
    CHECK_EQ(h->count.free_blocks, 1); /* everything merged back */
    _fa_classic_heap_destroy(h);
}

int main(void)
{
    for (int index = 0; index < 2; index++) {
        for (int policy = 0; policy <= FA_POLICY_SEGREGATED; policy++) {
            test_ffnf(policy, index);
            test_bfwf(policy, index);
            test_coalesce_then_reuse(policy, index);
            test_split_and_reuse(policy, index);
            test_kth(policy, index);
            test_three_holes(policy, index);
            test_aligned(policy, index);
        }
        test_next_fit_rover(index);
        test_segregated(index);
    }
    printf("lab/policies: ok\n");
    return 0;
}

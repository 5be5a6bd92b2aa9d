/* Scripted scenarios where each placement policy must pick a known block: the CSE3320 ffnf and
 * bfwf tests, test3 (coalesce then reuse), test4 (split and reuse), the KTH seminar's test.c,
 * and a few of our own (best versus first, next fit's wrap, segregated fit's exact lists,
 * TLSF's lists, the buddy system's splits and merges, aligned blocks). Every scenario runs on
 * both indexes (tree and list; TLSF and the buddy system keep their own under both). */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "lab_test.h"

static const char *const policy_name[] = {"first",      "next", "best",  "worst",
                                          "segregated", "tlsf", "buddy", "slab"};

static fa_classic_heap *make_heap(enum fa_policy policy, enum fa_lab_index index)
{
    return lab_test_heap(policy, index, true, (size_t)64 << 20);
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
    /* TLSF: 1000 bytes (block 1016) search from list [1024, 1088) up; 6016 comes first. */
    bool smallest =
        policy == FA_POLICY_BEST || policy == FA_POLICY_SEGREGATED || policy == FA_POLICY_TLSF;
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
 * next: the rover is at the start), the 100 (best, and TLSF: 90 bytes make a 112-byte block, whose
 * 16-byte list is empty, and the 100's 128-byte list is the next) or the 300 (worst). Segregated
 * fit takes the
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
    void *expected = policy == FA_POLICY_BEST || policy == FA_POLICY_TLSF ? h100
                     : policy == FA_POLICY_SEGREGATED                     ? h200
                                                                          : h300;
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

/* TLSF's lists: sizes below 256 bytes in 16-byte lists; above, a power-of-two range cut in 16. */
static void test_tlsf_mapping(void)
{
    static const struct {
        size_t size;
        unsigned fl, sl;
    } cases[] = {
        {48, 0, 3},    {240, 0, 15},
        {256, 1, 0},   {272, 1, 1},
        {496, 1, 15},  {512, 2, 0},
        {1024, 3, 0},  {1040, 3, 0},
        {1088, 3, 1},  {2048, 4, 0},
        {6016, 5, 7},  {65408, 8, 15},
        {65536, 9, 0}, {(size_t)1 << 46, 39, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned fl, sl;
        _fa_tlsf_mapping(cases[i].size, &fl, &sl);
        CHECK_MSG(fl == cases[i].fl && sl == cases[i].sl,
                  "size %zu: list (%u,%u), expected (%u,%u)", cases[i].size, fl, sl, cases[i].fl,
                  cases[i].sl);
    }
}

/* Holes kept apart by 1-byte blocks, freed in the order given (the blocks' sizes: n + 16). */
static void make_holes(fa_classic_heap *h, const size_t *n, int count, void **hole)
{
    for (int i = 0; i < count; i++) {
        hole[i] = alloc(h, n[i]);
        alloc(h, 1);
    }
    for (int i = 0; i < count; i++)
        release(h, hole[i]);
}

/* TLSF's choices, which differ from best fit's: good fit rounds the request up to the start of
 * the next subrange and takes the head of the first non-empty list from there, so a block of the
 * request's own subrange that would fit is passed over; lists are LIFO. */
static void test_tlsf(enum fa_lab_index index)
{
    fa_classic_heap *h = make_heap(FA_POLICY_TLSF, index);
    CHECK(h->index.kind == FA_INDEX_TLSF);
    const struct fa_tlsf *t = h->index.tlsf;

    /* KTH's test: 1024 bytes freed (a 1040-byte block, list [1024, 1088)) are not reused by
     * 1024 bytes again, which could need up to 1087: the heap grows. 1008 bytes (a 1024-byte
     * block, the list's start) take it. */
    void *hole[4];
    make_holes(h, (const size_t[]){1024}, 1, hole);
    CHECK(t->sl_bitmap[3] == 1u && t->fl_bitmap == 1u << 3);
    void *p = alloc(h, 1024);
    CHECK(p != hole[0] && p > hole[0]);
    CHECK(alloc(h, 1008) == hole[0]);
    CHECK(t->fl_bitmap == 0 && t->sl_bitmap[3] == 0); /* the list emptied, both bits cleared */
    _fa_classic_heap_destroy(h);

    /* Holes of 1100 and 1500 bytes (lists [1088, 1152) and [1472, 1536)); 1080 bytes (a 1104
     * block, fitting both) round up past the first list and take the 1500: best fit would take
     * the 1100. The 1100 then serves a request its whole list fits: 1056 bytes (block 1072). */
    h = make_heap(FA_POLICY_TLSF, index);
    t = h->index.tlsf;
    make_holes(h, (const size_t[]){1084, 1484}, 2, hole);
    CHECK(alloc(h, 1080) == hole[1]);
    CHECK(alloc(h, 1056) == hole[0]);
    _fa_classic_heap_destroy(h);

    /* LIFO within a list; an empty second level sends the search to the next first level. */
    h = make_heap(FA_POLICY_TLSF, index);
    t = h->index.tlsf;
    make_holes(h, (const size_t[]){500, 500, 5000}, 3, hole);
    CHECK(alloc(h, 300) == hole[1]); /* 300's lists are empty: [512, 1024) has both 500s */
    CHECK(alloc(h, 300) == hole[0]);
    CHECK(alloc(h, 300) == hole[2]); /* first level 2 empty now: the 5000 (level 5) */
    _fa_classic_heap_destroy(h);

    /* Immediate coalescing: x, y, z freed as z, x, y merge into one block of 3 x 208 bytes,
     * which leaves its list for that of 624 ([608, 640), level 2 subrange 3). */
    h = make_heap(FA_POLICY_TLSF, index);
    t = h->index.tlsf;
    void *x = alloc(h, 192), *y = alloc(h, 192), *z = alloc(h, 192);
    alloc(h, 1);
    release(h, z);
    release(h, x);
    CHECK(t->count == 2 && t->sl_bitmap[0] == 1u << 13); /* two 208-byte blocks, list (0, 13) */
    release(h, y);
    CHECK(t->count == 1 && t->sl_bitmap[0] == 0 && t->sl_bitmap[2] == 1u << 3);
    CHECK_EQ(h->count.coalesces, 2);
    CHECK(alloc(h, 592) == x); /* block 608: the start of the merged block's subrange */
    _fa_classic_heap_destroy(h);
}

static fa_classic_heap *make_buddy_arena(enum fa_lab_index index, size_t arena)
{
    struct fa_classic_heap_config cfg = {
        .policy = FA_POLICY_BUDDY, .index = index, .coalesce = true, .arena = arena};
    fa_classic_heap *h = _fa_classic_heap_create(&cfg, 0);
    CHECK(h != NULL);
    return h;
}

/* The binary buddy system (Knuth, TAOCP vol. 1, 2.5): blocks of 2^k bytes split in halves and
 * merged with their buddy, found by address arithmetic. */
static void test_buddy(enum fa_lab_index index)
{
    /* A 1024-byte arena is one free block. 100 bytes want 128 (with the header): 1024 splits
     * into 512 + 256 + 128 + 128, the lowest 128 is taken, one free block of each order is
     * left. */
    fa_classic_heap *h = make_buddy_arena(index, 1024);
    CHECK(h->index.kind == FA_INDEX_BUDDY);
    char *base = fa_block_payload(h->start);
    CHECK_EQ(h->count.free_blocks, 1);
    char *a = alloc(h, 100);
    CHECK(a == base);
    CHECK_EQ(h->count.splits, 3);
    CHECK_EQ(h->index.buddy->bitmap, (1u << 9) | (1u << 8) | (1u << 7));
    char *b = alloc(h, 100); /* a's buddy, without a split */
    CHECK(b == base + 128);
    char *c = alloc(h, 200); /* 216 bytes: the 256 */
    CHECK(c == base + 256);
    CHECK_EQ(h->count.splits, 3);
    CHECK_EQ(_fa_classic_heap_usable(h, c, "test"), 256 - 16);
    /* Internal fragmentation: 400 bytes requested, 112 + 112 + 240 granted, by size class. */
    CHECK_EQ(h->count.requested, 400);
    CHECK_EQ(h->count.granted, 464);
    CHECK_EQ(h->count.class_mallocs[7], 2);
    CHECK_EQ(h->count.class_granted[7], 224);
    CHECK_EQ(h->count.class_requested[8], 200);
    CHECK_EQ(h->count.class_granted[8], 240);
    /* a's buddy is in use: no merge. Then b merges with a (256 at 0), whose buddy, c, is in
     * use; c merges with that 256, and the 512 with the other 512: 1024 again. */
    release(h, a);
    CHECK_EQ(h->count.coalesces, 0);
    release(h, b);
    CHECK_EQ(h->count.coalesces, 1);
    release(h, c);
    CHECK_EQ(h->count.coalesces, 3);
    CHECK_EQ(h->count.free_blocks, 1);
    CHECK_EQ(_fa_classic_heap_largest_free(h), 1024 - 16);
    _fa_classic_heap_destroy(h);

    /* Neighbours that are not buddies never merge: of four 256s, the middle two freed stay
     * apart (b's buddy is a, c's is d); a and d freed make 512 + 512, then 1024. */
    h = make_buddy_arena(index, 1024);
    void *q[4];
    for (int i = 0; i < 4; i++)
        q[i] = alloc(h, 240);
    release(h, q[1]);
    release(h, q[2]);
    CHECK_EQ(h->count.free_blocks, 2);
    CHECK_EQ(h->count.coalesces, 0);
    release(h, q[0]);
    CHECK_EQ(h->count.coalesces, 1);
    release(h, q[3]);
    CHECK_EQ(h->count.coalesces, 3);
    CHECK_EQ(h->count.free_blocks, 1);
    /* Internal fragmentation: 241 bytes take a 512-byte block. */
    void *r = alloc(h, 241);
    CHECK_EQ(_fa_classic_heap_usable(h, r, "test"), 512 - 16);
    CHECK(_fa_classic_heap_alloc(h, 600) == NULL); /* 1024 would not fit next to it */
    _fa_classic_heap_destroy(h);

    /* Growth: a block of 2^k bytes starts at a multiple of 2^k, so 1000 bytes (1024) after a
     * 128 go to offset 1024, and the gap is tiled by free blocks of 128, 256 and 512. */
    h = make_heap(FA_POLICY_BUDDY, index);
    base = fa_block_payload(h->start);
    CHECK(alloc(h, 100) == base);
    char *k = alloc(h, 1000);
    CHECK(k == base + 1024);
    CHECK_EQ(h->count.heap_bytes, 2048);
    CHECK_EQ(h->count.free_blocks, 3);
    CHECK_EQ(h->index.buddy->bitmap, (1u << 9) | (1u << 8) | (1u << 7));
    /* realloc shrinking halves in place: 1024 to 128, three halves freed. */
    CHECK(_fa_classic_heap_resize(h, k, 100));
    _fa_classic_heap_check(h);
    CHECK_EQ(h->count.free_blocks, 6);
    CHECK(!_fa_classic_heap_resize(h, k, 200)); /* growing moves */
    /* Aligned requests: a block of at least the alignment, up to the origin's (32 MiB, half
     * of this heap's 64 MiB). */
    void *g = _fa_classic_heap_alloc_aligned(h, 4096, 10);
    CHECK_ALIGNED(g, 4096);
    CHECK_EQ(_fa_classic_heap_usable(h, g, "test"), 4096 - 16);
    g = _fa_classic_heap_alloc_aligned(h, (size_t)1 << 20, 10);
    CHECK_ALIGNED(g, (size_t)1 << 20);
    CHECK(_fa_classic_heap_alloc_aligned(h, (size_t)64 << 20, 10) == NULL);
    _fa_classic_heap_check(h);
    _fa_classic_heap_destroy(h);
}

/* Simple segregated storage, the slab allocator (Bonwick 1994): size classes in pages of equal
 * blocks, no splitting or coalescing, a page returned when empty. */
static void test_slab(enum fa_lab_index index)
{
    fa_classic_heap *h = make_heap(FA_POLICY_SLAB, index);
    CHECK(h->index.kind == FA_INDEX_SLAB);
    const struct fa_slab_lists *s = h->index.slab;
    char *base = fa_block_payload(h->start);
    /* 20 bytes: class 48. One page of 64 KiB is carved into 1365 blocks of 48 bytes (the last
     * one 64: the page's rest), the first taken; the next come in address order. */
    char *a = alloc(h, 20);
    CHECK(a == base);
    CHECK_EQ(h->count.heap_bytes, FA_SLAB_PAGE);
    CHECK_EQ(h->count.free_blocks, 1364);
    CHECK_EQ(fa_slab_page_class(s, 0), 1);
    CHECK_EQ(fa_slab_page_used(s, 0), 1);
    char *b = alloc(h, 30);
    CHECK(b == base + 48);
    CHECK_EQ(h->count.splits, 0);
    /* LIFO: the block freed last is taken first. */
    release(h, a);
    CHECK(alloc(h, 1) == a);
    /* Another class, another page: 100 bytes take a 128-byte block at the second page. */
    char *c = alloc(h, 100);
    CHECK(c == base + FA_SLAB_PAGE);
    CHECK_EQ(_fa_classic_heap_usable(h, c, "test"), 128 - 16);
    CHECK_EQ(fa_slab_page_class(s, 1), 6);
    /* No coalescing: two freed neighbours stay two blocks. */
    char *d = alloc(h, 100);
    alloc(h, 100);
    release(h, c);
    CHECK_EQ(h->count.coalesces, 0);
    release(h, d);
    CHECK_EQ(h->count.coalesces, 0);
    CHECK_EQ(fa_slab_page_used(s, 1), 1);
    /* The first page empties: kept carved, as its class's spare. */
    release(h, a);
    release(h, b);
    CHECK_EQ(fa_slab_page_class(s, 0), 1);
    CHECK_EQ(s->spare[0], 1);
    /* 1366 blocks of the class fill it and carve a third page. Freed, the first page to empty
     * becomes the spare again and the other is returned: one free run of a page, its 1365
     * blocks gone from the list, which serves the next class that needs a page. */
    static void *many[1366];
    for (int i = 0; i < 1366; i++)
        many[i] = alloc(h, 20);
    CHECK(many[1365] == base + 2 * FA_SLAB_PAGE);
    CHECK_EQ(s->spare[0], 0);
    for (int i = 0; i < 1366; i++)
        release(h, many[i]);
    CHECK_EQ(s->spare[0], 1);
    CHECK_EQ(fa_slab_page_class(s, 2), 0);
    /* Free: the spare's 1365 blocks, the 128-byte page's 511 and the returned page. */
    CHECK_EQ(h->count.free_blocks, 1365 + 511 + 1);
    CHECK_EQ(h->count.blocks, h->count.free_blocks + 1);
    char *e = alloc(h, 1000); /* class 1024 */
    CHECK(e == base + 2 * FA_SLAB_PAGE);
    CHECK_EQ(h->count.heap_bytes, 3 * FA_SLAB_PAGE);
    CHECK_EQ(fa_slab_page_class(s, 2), 1 + _fa_slab_class_of(1024));
    /* A large request: a run of whole pages; realloc keeps a block whole while it fits. */
    char *big = alloc(h, 70000);
    CHECK(big == base + 3 * FA_SLAB_PAGE);
    CHECK_EQ(_fa_classic_heap_usable(h, big, "test"), 2 * FA_SLAB_PAGE - 16);
    CHECK(_fa_classic_heap_resize(h, big, 10));
    CHECK_EQ(_fa_classic_heap_usable(h, big, "test"), 2 * FA_SLAB_PAGE - 16);
    CHECK(!_fa_classic_heap_resize(h, big, 200000));
    /* A freed run serves a shorter one and keeps its rest free. */
    release(h, big);
    char *one = alloc(h, 9000);
    CHECK(one == big);
    CHECK_EQ(_fa_classic_heap_usable(h, one, "test"), FA_SLAB_PAGE - 16);
    CHECK_EQ(h->count.splits, 1);
    /* Aligned: a power-of-two class at least the alignment, or runs. */
    void *g = _fa_classic_heap_alloc_aligned(h, 256, 10);
    CHECK_ALIGNED(g, 256);
    CHECK_EQ(_fa_classic_heap_usable(h, g, "test"), 256 - 16);
    g = _fa_classic_heap_alloc_aligned(h, (size_t)1 << 20, 10);
    CHECK_ALIGNED(g, (size_t)1 << 20);
    _fa_classic_heap_check(h);
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
        for (int policy = 0; policy < FA_POLICY_COUNT; policy++) {
            /* The buddy system's and the slab's layouts are their own: test_buddy, test_slab. */
            if (policy == FA_POLICY_BUDDY || policy == FA_POLICY_SLAB)
                continue;
            /* The exact reuses of ffnf and kth are not TLSF's: test_tlsf has its own. */
            if (policy != FA_POLICY_TLSF)
                test_ffnf(policy, index);
            test_bfwf(policy, index);
            test_coalesce_then_reuse(policy, index);
            test_split_and_reuse(policy, index);
            if (policy != FA_POLICY_TLSF)
                test_kth(policy, index);
            test_three_holes(policy, index);
            test_aligned(policy, index);
        }
        test_next_fit_rover(index);
        test_segregated(index);
        test_tlsf(index);
        test_buddy(index);
        test_slab(index);
    }
    test_tlsf_mapping();
    printf("lab/policies: ok\n");
    return 0;
}

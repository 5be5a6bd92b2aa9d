/* Free lists that defend themselves: how a free block is stored and how a pointer handed to
 * free is checked against its page. Used by the fast paths, so everything here is inline.
 *
 * A free block holds two words (fa_block_t):
 *   link: the next free block XOR a per-process random secret (as glibc's safe-linking does
 *         with the block's address). A program writing into a freed block replaces the link
 *         with its own data, which decodes to a non-canonical address: the next malloc sees it
 *         before following it and reports the corruption instead of crashing somewhere later.
 *   mark: the address of the page's descriptor. free() of a block whose mark is already set is
 *         probably a double free; malloc clears the mark. A live block that happens to hold
 *         the value is told apart by its link, which must then decode to a block of the page.
 */
#ifndef FA_FREE_LIST_H
#define FA_FREE_LIST_H

#include "engine/engine.h"
#include "platform/atomic.h"

/* Set once at start (process/start.c); its top bit is set, so that zeros, small numbers, text and
 * pointers written over a link all decode to non-canonical addresses. */
extern uintptr_t _fa_list_secret __attribute__((visibility("hidden")));
/* 2^FA_ADDRESS_BITS: no user address reaches it, FA_LIST_END and non-canonical addresses do.
 * A variable, not a constant, so that the fast path compares with it in memory: a 64-bit
 * constant would first take an instruction to load. */
extern uintptr_t _fa_list_limit __attribute__((visibility("hidden")));

static inline uintptr_t fa_link_encode(const fa_block_t *next)
{
    return (uintptr_t)next ^ _fa_list_secret;
}

static inline fa_block_t *fa_link_decode(uintptr_t link)
{
    return (fa_block_t *)(link ^ _fa_list_secret);
}

/* A decoded link the fast path may follow: the end of the list (FA_LIST_END) fails too. */
static inline bool fa_link_usable(const fa_block_t *block)
{
    return (uintptr_t)block < _fa_list_limit;
}

static inline uintptr_t fa_page_mark(const fa_page_t *page)
{
    return (uintptr_t)page;
}

/* Does p start one of the first `capacity` blocks of the page? One multiplication instead of
 * a division and two range checks. With d the block size, magic = M is an odd number just
 * above 2^64 / d and e = M * d - 2^64 (between 1 and 3d) is stored as limit / capacity. For
 * an offset n = p - start:
 *   n = i * d            ->  n * M = i * 2^64 + i * e  =  i * e (mod 2^64): below limit iff
 *                             i < capacity;
 *   n = i * d + r, r > 0  ->  n * M mod 2^64 >= M > limit (M >= 2^64 / 512 KiB = 2^45, limit
 *                             is at most 3 times a page's size; i * e is tiny, r * M is below
 *                             2^64), and the same holds for negative offsets;
 *   n off by k * 2^B      ->  (B = FA_ADDRESS_BITS) a non-canonical alias of a block start: M
 *                             odd makes k * 2^B * M mod 2^64 a nonzero multiple of 2^B: fails.
 *                             (An alias of an interior address may pass, as r * M can cancel
 *                             that multiple; the fast path then faults reading the block,
 *                             before writing anything: non-canonical addresses never map.)
 * tests/engine/test_block_check.c checks every offset of every size class. */
static inline bool fa_page_has_block(const fa_page_t *page, uintptr_t p)
{
    return (p - page->start) * page->magic < fa_atomic_load_relaxed(&page->limit);
}

/* The same on the owner's fast path: only the owner writes limit, so a plain read will do, and
 * it lets the compiler fold the load into the comparison. */
static inline bool fa_own_page_has_block(const fa_page_t *page, uintptr_t p)
{
    return (p - page->start) * page->magic < page->limit;
}

/* The remote-free stack's word (fa_page_t.xfree): user addresses fit below bit 48 on every
 * supported machine (arch.h), and a page never holds 2^16 blocks, so the count fits above. */
#define FA_XFREE_COUNT_SHIFT 48
#define FA_XFREE_ONE ((uintptr_t)1 << FA_XFREE_COUNT_SHIFT)
_Static_assert(FA_ADDRESS_BITS <= FA_XFREE_COUNT_SHIFT, "addresses fit below the count");
_Static_assert(((size_t)1 << FA_SMALL_PAGE_SHIFT) / FA_ALIGN < ((size_t)1 << 16),
               "a page's blocks fit in the count (the most: a small page of 16-byte blocks)");

/* The stack's top block; FA_LIST_END for an empty stack (its word is 0), so that the first
 * block pushed ends the list the owner will take over. */
static inline fa_block_t *fa_xfree_head(uintptr_t word)
{
    uintptr_t head = word & (FA_XFREE_ONE - 1);
    return head ? (fa_block_t *)head : FA_LIST_END;
}

static inline uint32_t fa_xfree_count(uintptr_t word)
{
    return (uint32_t)(word >> FA_XFREE_COUNT_SHIFT);
}

/* The word after pushing block onto the stack `word` describes. */
static inline uintptr_t fa_xfree_push(uintptr_t word, const fa_block_t *block)
{
    return (uintptr_t)block | ((word & ~(FA_XFREE_ONE - 1)) + FA_XFREE_ONE);
}

/* `free` ran out: the blocks the owner freed become the ones malloc pops. Every block listed
 * is then counted in `used` (none is on `local`). */
static inline void fa_page_take_local(fa_page_t *page)
{
    FA_ASSERT(page->free == FA_LIST_END && page->local != FA_LIST_END);
    uint16_t all = (uint16_t)(page->listed + page->pinned);
    page->placed += (uint16_t)(all - page->used);
    page->used = all;
    page->free = page->local;
    page->local = FA_LIST_END;
    /* Tested first: the page's first line, which other threads' frees read, is written only
     * when the list handed over was zero memory. */
    if (page->free_zero)
        page->free_zero = 0;
}

/* The blocks on `free` (counted in `used` but not handed out), up to the page's capacity: a
 * link that leads out of the page ends the count. For statistics and the heap visit, which read
 * other threads' pages as they change (a snapshot, unsynchronized on purpose). */
__attribute__((no_sanitize("thread"))) static inline size_t
fa_page_free_length(const fa_page_t *page)
{
    size_t count = 0;
    for (const fa_block_t *b = page->free; b != FA_LIST_END && count < page->capacity; count++) {
        if (!fa_page_has_block(page, (uintptr_t)b))
            break;
        b = fa_link_decode(b->link);
    }
    return count;
}

/* Take the head block of a page whose free list is not empty (the slow paths' pop). */
static inline fa_block_t *fa_page_pop(fa_page_t *page)
{
    fa_block_t *block = page->free;
    if (!fa_link_usable(block))
        _fa_free_list_corrupt(page, "free list");
    page->free = fa_link_decode(block->link);
    block->mark = 0;
    return block;
}

#endif

/* Pages: set up for a size class, build the free list lazily, collect remote frees. */
#include <string.h>

#include "engine/free_list.h"
#include "engine/mode_pages.h"
#include "engine/size_class.h"
#include "platform/atomic.h"

uintptr_t _fa_list_secret FA_BSS_FIRST;
uintptr_t _fa_list_limit = (uintptr_t)1 << FA_ADDRESS_BITS;
bool _fa_pages_slow FA_BSS_FIRST;
bool _fa_guard_spent;

/* The multiplier of fa_page_has_block (free_list.h): the smallest odd M with M * d > 2^64. */
uint64_t _fa_block_magic(uint64_t d)
{
    uint64_t m = UINT64_MAX / d + 1; /* M * d = 2^64 exactly when d is a power of two */
    if (m * d == 0)
        m++;
    if (!(m & 1))
        m++;
    return m;
}

void _fa_page_init(fa_page_t *page, fa_heap_t *heap, size_t bin)
{
    FA_ASSERT(bin < FA_BINS && heap == _fa_heap_tls);
    fa_segment_t *seg = (fa_segment_t *)((uintptr_t)page & ~FA_SEG_MASK);
    size_t index = (size_t)(page - seg->pages);
    size_t page_size = (size_t)1 << seg->page_shift;
    uintptr_t base = (uintptr_t)seg + (index << seg->page_shift);
    uintptr_t start = index ? base : (uintptr_t)seg + _fa_segment_first_offset(seg->kind);
    bool same_class = page->bin == bin && page->block_size == fa_bin_size(bin); /* as before */
    page->block_size = (uint32_t)fa_bin_size(bin);
    page->magic = _fa_block_magic(page->block_size);
    fa_atomic_store_relaxed(&page->limit, 0);
    page->bin = (uint8_t)bin;
    page->start = start;
    const struct fa_mode_pages *own = fa_mode_pages_of(seg);
    uintptr_t end = base + page_size - (own ? own->page_tail : 0);
    size_t blocks = (end - start) / page->block_size;
    /* A mode's page of big blocks keeps big_page_far closed after its last block: a write that
     * far past any of them faults (2 blocks at least: the first is held back). */
    if (own && fa_bin_kind(bin) == FA_SEG_BIG) {
        size_t far = end - start > own->big_page_far ? end - start - own->big_page_far : 0;
        blocks = far / page->block_size > 2 ? far / page->block_size : 2;
    }
    page->reserved = (uint16_t)blocks;
    if (own && !same_class)
        own->page_class_changed(page, end);
    page->capacity = 0;
    page->free = page->local = FA_LIST_END;
    page->free_zero = 0;
    page->placed = 0;
    page->used = page->listed = 0;
    page->pinned = 0;
    page->sparse_at = 0;
    page->full_offset = 0;
    page->mesh_returns = 0;
    page->sparse_seen = 0;
    page->xcollected = 0;
    page->next = page->prev = NULL;
    fa_atomic_store_relaxed(&page->xfree, 0);
    bool by_mode = fa_mode_pages() != NULL, slow = by_mode || _fa_pages_slow;
    page->by_mode = by_mode;
    page->slow = slow;
    page->prof_slow = page->prof_armed = 0;
    page->prof_placed = 0;
    fa_atomic_store_relaxed(&page->prof_sampled, 0);
    fa_page_filter_clear(page);
    /* From the locals, not fa_owner_word: reading the bit-fields back loads the whole word,
     * `state` with it, which the purger may be writing atomically (a race to TSan). */
    fa_atomic_store_release(&page->owner, (uintptr_t)heap | (slow ? FA_OWNER_SLOW : 0));
    fa_page_set_thread(page, heap->thread);
}

/* Chain count new blocks in address order in front of rest, each marked free like any freed
 * block, so that freeing one that was never handed out is caught. */
static fa_block_t *link_new_blocks(fa_page_t *page, char *first, size_t count, fa_block_t *rest)
{
    size_t size = page->block_size;
    char *last = first + (count - 1) * size;
    uintptr_t mark = fa_page_mark(page);
    for (char *b = first; b < last; b += size) {
        ((fa_block_t *)b)->link = fa_link_encode((fa_block_t *)(b + size));
        ((fa_block_t *)b)->mark = mark;
    }
    ((fa_block_t *)last)->link = fa_link_encode(rest);
    ((fa_block_t *)last)->mark = mark;
    return (fa_block_t *)first;
}

/* The first words of the blocks about to be provisioned in a page taken CLEAN read as zero,
 * unless the program wrote there: past the last block handed out (every block before them
 * is), as glibc notices a write over its top chunk at the next malloc. Only the first two words:
 * an overflow is contiguous, and crosses them first. */
static void check_fresh(const fa_page_t *page, char *first)
{
    fa_block_t *block = (fa_block_t *)first;
    /* A write, not a read, touches the memory first: a read of a page never touched maps the
     * kernel's zero page, and the write that provisions the block then faults a second time
     * (churn-wide: 5 % more page faults, 11 % more time). The swap writes what the provisioning
     * will overwrite anyway, and gives the old word back. */
    uintptr_t link = fa_atomic_exchange_relaxed(&block->link, 0);
    if (fa_unlikely(link | block->mark))
        _fa_overflow_into_fresh(page, first);
}

/* Provision the next blocks of the page, at most FA_EXTEND_BYTES of them at a time, so that a
 * page that serves few blocks costs only their memory. */
bool _fa_page_extend(fa_page_t *page)
{
    FA_ASSERT(fa_owner_heap(fa_atomic_load_relaxed(&page->owner)) == _fa_heap_tls);
    if (page->capacity >= page->reserved)
        return false;
    size_t size = page->block_size;
    size_t count = FA_EXTEND_BYTES / size;
    const struct fa_mode_pages *own = fa_mode_pages_of(page);
    size_t least = own ? own->least_batch : 1;
    /* Builds for debugging tools never hand out block 0 (a mode's pages have their own
     * reason): the descriptor's `start` points at it, and a leak checker scanning the segment
     * header would count a leaked block 0 as reachable. */
    size_t skip = 0;
#ifdef FA_TOOLS
    skip = !own && page->capacity == 0;
#endif
    if (count < least + skip)
        count = least + skip;
    if (count > (size_t)(page->reserved - page->capacity))
        count = page->reserved - page->capacity;
    char *first = (char *)page->start + (size_t)(page->capacity + skip) * size;
    uintptr_t seg = (uintptr_t)page & ~FA_SEG_MASK;
    if (own ? !own->provision(page)
            : !_fa_segment_open((fa_segment_t *)seg,
                                (uintptr_t)first - seg + (count - skip) * size))
        return false;
    /* The new blocks go in front of `free`: it stays all zero memory if it was and they are. */
    bool zero = page->fresh && !own;
    if (zero)
        check_fresh(page, first);
    page->free_zero = zero && (page->free == FA_LIST_END || page->free_zero);
    page->free = own ? own->new_blocks(page, first, count, page->free)
                     : link_new_blocks(page, first, count - skip, page->free);
    size_t linked = count - (page->capacity == 0 && (skip || own));
    page->listed = (uint16_t)(page->listed + linked);
    page->used = (uint16_t)(page->used + linked);
    page->placed += linked;
    size_t end = fa_align_up((uintptr_t)first + (count - skip) * size - page->start, FA_OS_PAGE);
    if (end / FA_OS_PAGE > page->touched)
        page->touched = (uint16_t)(end / FA_OS_PAGE);
    /* Other threads read capacity and limit to validate the pointers they free. */
    uint16_t capacity = (uint16_t)(page->capacity + count);
    fa_atomic_store_relaxed(&page->capacity, capacity);
    fa_atomic_store_relaxed(&page->limit, capacity * (page->magic * size));
    return true;
}

/* The last block of a list of the page and (count, unless NULL) the list's length, each link
 * checked on the way: a link out of the page, or more blocks than the page has, is reported as
 * corruption of `what`. */
static fa_block_t *list_tail(const fa_page_t *page, fa_block_t *list, size_t *count,
                             const char *what)
{
    size_t n = 1;
    fa_block_t *tail = list;
    for (fa_block_t *next; (next = fa_link_decode(tail->link)) != FA_LIST_END; tail = next)
        if (!fa_page_has_block(page, (uintptr_t)next) || ++n > page->capacity)
            _fa_free_list_corrupt(page, what);
    if (count)
        *count = n;
    return tail;
}

/* Blocks other threads freed go onto `local` as the stack they came in (no walk: the owner
 * reads none of them until malloc hands them out), or, when `local` holds blocks already, in
 * front of them (a walk to the stack's end, checking each link). Their page may be empty now:
 * `used` counts them no longer. */
void _fa_page_collect(fa_page_t *page)
{
    if (!fa_atomic_load_relaxed(&page->xfree))
        return;
    /* Acquire pairs with the release of the remote push: the block's links are visible. */
    uintptr_t taken = fa_atomic_exchange_acquire(&page->xfree, 0);
    if (!taken)
        return;
    fa_block_t *list = fa_xfree_head(taken);
    uint32_t count = fa_xfree_count(taken);
    if (page->local != FA_LIST_END)
        list_tail(page, list, NULL, "remote free list")->link = fa_link_encode(page->local);
    /* Unwalked links are checked as the malloc paths follow them, like the local list's. */
    page->local = list;
    page->used = (uint16_t)(page->used - count);
    page->xcollected += count;
}

bool _fa_page_refill(fa_page_t *page)
{
    if (page->free != FA_LIST_END)
        return true;
    /* `local` moves to `free` before the remote stack comes, which then needs no walk. */
    if (page->local != FA_LIST_END)
        fa_page_take_local(page);
    _fa_page_collect(page);
    if (page->free == FA_LIST_END && page->local != FA_LIST_END)
        fa_page_take_local(page);
    return page->free != FA_LIST_END;
}

void _fa_page_give_up_free(fa_page_t *page)
{
    if (page->free == FA_LIST_END)
        return;
    size_t count;
    list_tail(page, page->free, &count, "free list")->link = fa_link_encode(page->local);
    page->local = page->free;
    page->free = FA_LIST_END;
    page->used = (uint16_t)(page->used - count);
    page->placed -= count;
}

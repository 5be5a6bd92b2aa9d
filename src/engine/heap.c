/* Thread heaps: each thread allocates from its own heap, reached through initial-exec TLS.
 *
 * The TLS pointer starts at a static empty heap whose every direct slot points to an empty
 * page, so the malloc fast path needs no NULL test: the first allocation of a thread fails
 * the fast path and lands in _fa_malloc_generic, which sets up the real heap.
 *
 * Per size class the heap keeps a queue of pages with free blocks; malloc serves from the head.
 * The head is "pinned": its `used` carries +1, so freeing its last block never reaches 0 on
 * the fast path and a malloc/free loop on one block never gives its page away (until it has
 * stayed empty and unused for FITALLOC_PURGE_DELAY: _fa_heap_release_idle_heads). Pages without
 * a free block sit on the full list with FA_OWNER_FULL set in their owner word; the owner's
 * frees move such a page back once a 16th of its blocks (up to 16) are free (move_to_full),
 * a remote free pushes it onto `notified_pages`, and the owner moves it back.
 */
#include <string.h>

#include "common/options.h"
#include "engine/engine.h"
#include "engine/mode_pages.h"
#include "engine/free_list.h"
#include "engine/size_class.h"
#include "platform/atomic.h"
#include "profile/profile.h"

static fa_heap_t *pool; /* heap structures not in use */
static fa_heap_t *all_heaps;
/* Heaps whose thread ended, kept whole, newest first: the next thread that starts takes one
 * with its pages, queues and free blocks, as an arena of glibc's passes to a new thread. Where
 * threads come and go (a server's workers), the new thread then finds the memory its
 * predecessor freed, and frees what the predecessor left locally, instead of each ended
 * thread's pages waiting, half used, for some other heap to adopt them. */
static fa_heap_t *parked;
static size_t parked_count;

/* The part of the last chunk of heap structures not handed out yet. A structure is written
 * only when a thread takes it: linking every structure of a fresh chunk onto the pool at once
 * touched a page of memory for each of the three a single-threaded program never uses. */
static char *carve_next, *carve_end;

static fa_heap_t *carve_heap_locked(void)
{
    if ((size_t)(carve_end - carve_next) < sizeof(fa_heap_t))
        return NULL;
    fa_heap_t *heap = (fa_heap_t *)carve_next;
    carve_next += sizeof(fa_heap_t);
    heap->all_next = all_heaps;
    fa_atomic_store_release(&all_heaps, heap); /* take_loan walks the list without the lock */
    return heap;
}

/* The sparse trigger (types.h: sparse_at) of a page in its queue, not at its head. A page
 * that already has no more blocks than the trigger's point goes without one. */
static void arm_sparse(fa_page_t *page)
{
    if (!_fa_mesh_on || page->bin >= FA_SMALL_BINS || page->slow || page->pinned || page->sparse_at)
        return;
    uint16_t at = fa_mesh_sparse_at(page);
    if (at && page->used > at) {
        page->sparse_at = at;
        page->used = (uint16_t)(page->used - at);
    }
}

static void disarm_sparse(fa_page_t *page)
{
    page->used = (uint16_t)(page->used + page->sparse_at);
    page->sparse_at = 0;
}

/* Behind the head of a class's queue: the page may carry the sparse trigger there. */
static void queue_append(fa_heap_t *heap, fa_page_t *page)
{
    fa_page_queue_t *q = &heap->queues[page->bin];
    bool head = q->head == NULL;
    fa_page_queue_push_back(q, page);
    if (!head)
        arm_sparse(page);
}

/* Unlink page; a pinned head loses its +1, a trigger its offset, a full page its full_offset
 * (the caller checks `used` for 0). */
static void queue_remove(fa_page_queue_t *q, fa_page_t *page)
{
    disarm_sparse(page);
    page->used = (uint16_t)(page->used + page->full_offset);
    page->full_offset = 0;
    fa_page_queue_unlink(q, page);
    if (page->pinned) {
        page->pinned = 0;
        page->used--;
    }
}

/* The first of the next FA_QUEUE_SCAN pages from `page` on with freed blocks, local or remote;
 * NULL if there is none. Bounded, so that a long queue costs a malloc little. */
#define FA_QUEUE_SCAN 8
static fa_page_t *queue_find_freed(fa_page_t *page)
{
    for (int i = 0; page && i < FA_QUEUE_SCAN; i++, page = page->next)
        if (page->free != FA_LIST_END || page->local != FA_LIST_END ||
            fa_atomic_load_relaxed(&page->xfree))
            return page;
    return NULL;
}

/* Point the class's direct slots (and its bin_page) at page. */
static void point_slots(fa_heap_t *heap, size_t bin, fa_page_t *page)
{
    heap->bin_page[bin] = page;
    size_t size = fa_bin_size(bin);
    if (size > FA_DIRECT_MAX)
        return;
    size_t first = bin ? fa_bin_size(bin - 1) + 1 : 0;
    for (size_t slot = first; slot <= size; slot++)
        heap->direct[slot] = page;
}

/* Borrowed classes. A heap's first page of a class costs an OS page of memory at least, so a
 * thread that allocates a few blocks in each of many classes (a short-lived worker, one of
 * many threads) held a page per class: 24 classes, 96 KiB, for blocks of 8 to 512 bytes. Until
 * its own page is needed, a class of the direct slots whose size is not a power of two borrows
 * instead: its slots point at the head page of the power-of-two class above it (at most twice
 * its size, and as well aligned), whose blocks serve it. The borrow ends for good, and the class
 * opens its own page, the first time that head has no free block for it, or stops being the
 * head: a class in real use has a page of its own after a few KiB of blocks. */
enum fa_borrow { FA_BORROW_NONE, FA_BORROWING, FA_BORROW_ENDED };

/* The power-of-two class a small class borrows from (itself if it is one). */
static size_t lender_of(size_t bin)
{
    size_t size = fa_bin_size(bin);
    return fa_bin_of((size_t)1 << (64 - __builtin_clzl(size - 1)));
}

/* The lender's head changed: a class borrowing it whose slots no longer name its head goes to
 * the slow path at its next malloc, which ends the borrow. */
static void lender_head_changed(fa_heap_t *heap, size_t lender, const fa_page_t *fast)
{
    for (size_t bin = lender; bin-- > 0 && lender_of(bin) == lender;)
        if (heap->borrow[bin] == FA_BORROWING && heap->bin_page[bin] != fast)
            point_slots(heap, bin, &_fa_page_empty);
}

/* After any change to a queue: pin its head and point the direct slots of its sizes at it. */
static void queue_head_changed(fa_heap_t *heap, size_t bin)
{
    fa_page_t *head = heap->queues[bin].head;
    if (head && head->sparse_at)
        disarm_sparse(head);
    if (head && !head->pinned) {
        head->pinned = 1;
        head->used++;
    }
    fa_page_t *fast = head && !head->slow ? head : &_fa_page_empty;
    if (bin >= FA_SMALL_BINS) {
        point_slots(heap, bin, fast);
        return;
    }
    if (head && heap->borrow[bin] == FA_BORROWING)
        heap->borrow[bin] = FA_BORROW_ENDED;
    if (heap->borrow[bin] != FA_BORROWING)
        point_slots(heap, bin, fast);
    if (lender_of(bin) == bin)
        lender_head_changed(heap, bin, fast);
}

/* A page for a class the heap has no page of: the head of its lender's queue, which the class
 * borrows from now on, when it may (above). NULL: the class opens a page of its own. */
static fa_page_t *borrow_page(fa_heap_t *heap, size_t bin)
{
    if (fa_bin_size(bin) >= FA_DIRECT_MAX || heap->borrow[bin] != FA_BORROW_NONE ||
        _fa_pages_slow || fa_mode_pages())
        return NULL;
    size_t lender = lender_of(bin);
    if (lender == bin)
        return NULL;
    heap->borrow[bin] = FA_BORROWING;
    fa_page_t *page = _fa_heap_find_page(heap, lender);
    /* An abandoned segment adopted meanwhile may have brought the class pages of its own. */
    if (!page || page->slow || page != heap->queues[lender].head || heap->queues[bin].head) {
        heap->borrow[bin] = FA_BORROW_ENDED;
        return NULL;
    }
    point_slots(heap, bin, page);
    return page;
}

static void release_page(fa_heap_t *heap, fa_page_t *page)
{
    /* A migrant's segment may be another heap's, or abandoned: back there, it would serve only
     * that segment's owner. The pool's emptied list serves whichever heap needs a page next. */
    if (page->migrant) {
        _fa_page_pool_put_empty(page);
        return;
    }
    fa_segment_t *seg = (fa_segment_t *)((uintptr_t)page & ~FA_SEG_MASK);
    _fa_segment_release_page(page);
    if (fa_atomic_load_relaxed(&seg->used_pages) == 0) {
        fa_segment_list_remove(&heap->segments[seg->kind], seg);
        _fa_segment_release(seg);
    }
}

/* Whether the page's own heap freed any of its blocks since the page was set up. The page is
 * full: every block put on `free` was handed out, and of those, the ones not out now came
 * back, by the owner's frees or by the remote ones it collected. */
static bool owner_freed_into(const fa_page_t *page)
{
    return page->placed > (uint64_t)page->used + page->xcollected;
}

/* With FITALLOC_PAGE_POOL=1, a small page that fills up goes to the page pool rather than to
 * the full list when other threads free its blocks (it has collected remote frees) and so does
 * its own thread: those frees then serve whichever thread allocates in its class next, instead
 * of waiting for this one. A page only its own thread frees stays, so that a single thread's
 * frees stay local; so does a page only other threads free, a producer's: its consumers bring
 * every block back, and the producer, still allocating in the class, takes the page back at
 * their notice, where the pool would pass it through the lock to whichever thread came next
 * (record 080). Slow pages stay too (secure mode, tracing). */
static bool shared_when_full(const fa_page_t *page)
{
    return fa_option(page_pool) && page->xcollected != 0 && owner_freed_into(page) && !page->slow &&
           !page->prof_slow && page->bin < FA_SMALL_BINS;
}

/* Owner side of the full-page protocol. Publishing FA_OWNER_FULL and then reading xfree, both
 * sequentially consistent, pairs with the remote side's push-then-read: at least one of the two
 * sees the other, so a remote free can never be stranded on a full page nobody looks at. */
static void move_to_full(fa_heap_t *heap, fa_page_t *page)
{
    FA_ASSERT(page->free == FA_LIST_END && page->local == FA_LIST_END);
    queue_remove(&heap->queues[page->bin], page);
    if (shared_when_full(page)) {
        _fa_page_pool_put(page);
        queue_head_changed(heap, page->bin);
        return;
    }
    fa_page_queue_push_back(&heap->full, page);
    /* The owner's frees stay on the fast path, onto `local`, until the page has
     * fa_page_return_blocks of them to hand out: its `used` counts down to that point.
     * A page that frees slowly keeps thread word 0 and comes back at its first free, and so
     * does every page with meshing on: the pages a full page's held blocks keep from the
     * sparse trigger's count cost the Redis study's server more mesher work and memory
     * (docs/design.md, "Full pages come back with a 16th of their blocks free"). */
    uint16_t back = fa_page_return_blocks(page);
    if (!_fa_mesh_on && !fa_page_frees_slowly(page) && page->used > back) {
        page->full_offset = (uint16_t)(page->used - back);
        page->used = back;
        fa_page_set_thread(page, heap->thread);
    } else {
        fa_page_set_thread(page, 0);
    }
    fa_atomic_store_seq_cst(&page->owner, fa_owner_word(heap, page) | FA_OWNER_FULL);
    if (fa_atomic_load_seq_cst(&page->xfree)) {
        fa_atomic_store_relaxed(&page->owner, fa_owner_word(heap, page));
        fa_page_set_thread(page, heap->thread);
        queue_remove(&heap->full, page);
        queue_append(heap, page);
    }
    queue_head_changed(heap, page->bin);
}

/* A page goes to the mesher only when its class's queue holds FA_MESH_SPARE_PAGES other pages
 * to allocate from: one the heap is about to need again (a producer's page emptied by its
 * consumer, the second page of a class whose blocks live briefly) would come back at once, each
 * way walking its blocks. */
#define FA_MESH_SPARE_PAGES 3
static bool queue_has_spare(const fa_page_queue_t *q, const fa_page_t *page)
{
    int others = 0;
    for (const fa_page_t *p = q->head; p && others < FA_MESH_SPARE_PAGES; p = p->next)
        others += p != page;
    return others == FA_MESH_SPARE_PAGES;
}

/* A page leaves the full list: back to its queue, or to its segment if it is empty, or, left
 * sparse by frees from other threads (the sparse trigger sees only the owner's), to the
 * mesher. */
static void move_from_full(fa_heap_t *heap, fa_page_t *page)
{
    fa_atomic_store_relaxed(&page->owner, fa_owner_word(heap, page));
    fa_page_set_thread(page, heap->thread);
    queue_remove(&heap->full, page);
    _fa_page_collect(page);
    if (page->used == 0) {
        release_page(heap, page);
        return;
    }
    if (_fa_mesh_on && page->bin < FA_SMALL_BINS && !page->slow &&
        page->used <= fa_mesh_sparse_at(page) && queue_has_spare(&heap->queues[page->bin], page) &&
        _fa_mesh_detach(page))
        return;
    queue_append(heap, page);
    queue_head_changed(heap, page->bin);
}

/* Slow-path calls between two looks for idle heads before a class unused between them counts
 * as idle: the clock alone would call every class of a thread idle that merely did not run
 * (more threads than cores), and it would give all its pages away when it ran again. */
#define FA_IDLE_CLASS_TICKS 1024

/* With FITALLOC_PAGE_POOL=1, a small class the heap has not allocated in since its last look
 * for idle heads (the same head, nothing placed on or taken from its free list), while it
 * allocated in others (FA_IDLE_CLASS_TICKS), gives its pages with live blocks to the pool: a
 * thread that allocates in the class takes them, and the blocks freed there serve it, instead
 * of waiting, half used, for this thread to come back to the class. Only here, on the heap's
 * own slow path, as every page given to the pool. A page with a notice of ours pending stays
 * (the notice, in our list, would keep its flag set for a new owner). */
static void hand_over_idle_class(fa_heap_t *heap, size_t bin)
{
    if (!fa_option(page_pool) || bin >= FA_SMALL_BINS)
        return;
    fa_page_queue_t *q = &heap->queues[bin];
    for (fa_page_t *page = q->head, *next; page; page = next) {
        next = page->next;
        if (page->slow || page->prof_slow || fa_atomic_load_acquire(&page->notified))
            continue;
        queue_remove(q, page);
        _fa_page_give_up_free(page);
        _fa_page_collect(page);
        if (page->used == 0)
            release_page(heap, page);
        else
            _fa_page_pool_put(page);
    }
    queue_head_changed(heap, bin);
}

/* Block loans. With more threads than cores, the blocks other threads free into the pages of a
 * thread that is not running wait on those pages' remote-free stacks, and the running threads
 * open fresh memory meanwhile (rptest:8: at 93 % of the fresh memory touched, another heap's
 * pages of the class held enough freed blocks; record 126). A heap about to open fresh memory
 * of a class takes instead the whole remote-free stack of a page of that class of an idle heap
 * (one whose slow path has not read the clock for FA_LOAN_IDLE_MS) and hands its blocks out
 * from its slow path. The exchange that takes the stack is the one the owner's collection
 * makes, so each block is taken by exactly one of them; the page's `used` still counts the
 * blocks as live, which they are once handed out, and each goes back to its page when freed
 * (docs/design.md, "Frees from other threads"). No page changes hands: the owner's lists, and
 * so its fast paths, are untouched. A loan not used up by the next look for idle heads goes
 * back onto its page's stack. */
#define FA_LOAN_IDLE_MS 4
/* Pages of another heap's queue looked at, from its head, and of its full list; heaps looked
 * at, at most. */
#define FA_LOAN_SCAN_QUEUE 4
#define FA_LOAN_SCAN_FULL 8
#define FA_LOAN_SCAN_HEAPS 64

static bool loans_allowed(void)
{
    return fa_option(block_loans) && !_fa_pages_slow && !fa_mode_pages() && !_fa_profiling;
}

/* A page of class bin with at least `want` blocks on its remote stack, among the first pages
 * of the heap's queue and full list; NULL if none. Reads another thread's lists as they are:
 * a hint (descriptors are never unmapped), which take_loan checks. */
__attribute__((no_sanitize("thread"))) static fa_page_t *loan_candidate(const fa_heap_t *other,
                                                                        size_t bin, uint32_t want)
{
    const fa_page_t *page = other->queues[bin].head;
    for (int i = 0; page && i < FA_LOAN_SCAN_QUEUE; i++, page = page->next)
        if (fa_xfree_count(fa_atomic_load_relaxed(&page->xfree)) >= want)
            return (fa_page_t *)page;
    page = other->full.head;
    for (int i = 0; page && i < FA_LOAN_SCAN_FULL; i++, page = page->next)
        if (page->bin == bin && fa_xfree_count(fa_atomic_load_relaxed(&page->xfree)) >= want)
            return (fa_page_t *)page;
    return NULL;
}

/* Whether page serves class bin: its remote stack then holds blocks of the class (a page is
 * set up for another class only once its stack is empty and every block came back). Read as it
 * is; take_loan asks again once the stack is taken. */
__attribute__((no_sanitize("thread"))) static bool loan_page_class(const fa_page_t *page,
                                                                   size_t bin)
{
    return fa_atomic_load_acquire(&page->state) == FA_PAGE_USED && page->bin == bin &&
           page->block_size == fa_bin_size(bin);
}

/* The page is other's, not a slow page's (secure mode, tracing, the profiler's, the mesher's),
 * nor pooled or abandoned, and serves class bin. */
static bool loan_page_fits(const fa_page_t *page, const fa_heap_t *other, size_t bin)
{
    uintptr_t owner = fa_atomic_load_acquire(&page->owner);
    return fa_owner_heap(owner) == other && !(owner & FA_OWNER_SLOW) && loan_page_class(page, bin);
}

/* Put a list of count blocks of page (first to last) back on its remote stack, as remote frees
 * do, with their notice to a full page's owner or to the pool. */
static void loan_push_back(fa_page_t *page, fa_block_t *first, fa_block_t *last, uint32_t count)
{
    uintptr_t head = fa_atomic_load_relaxed(&page->xfree), pushed;
    do {
        last->link = fa_link_encode(fa_xfree_head(head));
        pushed =
            (uintptr_t)first | ((head & ~(FA_XFREE_ONE - 1)) + (uintptr_t)count * FA_XFREE_ONE);
    } while (!fa_atomic_cas_weak_seq_cst(&page->xfree, &head, pushed));
    uintptr_t owner = fa_atomic_load_seq_cst(&page->owner);
    if (owner & FA_OWNER_FULL)
        _fa_heap_notify(page);
    else if (owner == 0)
        _fa_page_pool_freed(page, pushed);
}

/* The loan's blocks count as handed out (stats.c: allocs = frees + live): the remote frees
 * that put them on the stack are counted as collected, and as frees of the class; given back,
 * the other way. */
static void loan_count(size_t bin, uint64_t blocks)
{
    fa_atomic_add_relaxed(&_fa_counters.collected[bin], blocks);
    fa_atomic_add_relaxed(&_fa_counters.bin_frees[bin], blocks);
}

/* Put a list of blocks of page back on its stack, each link checked on the way; its length. */
static uint32_t loan_return(fa_page_t *page, fa_block_t *first)
{
    uint32_t count = 1;
    fa_block_t *last = first;
    for (fa_block_t *next; (next = fa_link_decode(last->link)) != FA_LIST_END; last = next, count++)
        if (!fa_page_has_block(page, (uintptr_t)next) ||
            count >= fa_atomic_load_relaxed(&page->capacity))
            _fa_free_list_corrupt(page, "remote free list");
    loan_push_back(page, first, last, count);
    return count;
}

static void loan_give_back(fa_heap_t *heap, size_t bin)
{
    fa_block_t *first = heap->loan[bin];
    if (!first)
        return;
    heap->loan[bin] = NULL;
    loan_count(bin, (uint64_t)0 - loan_return(heap->loan_page[bin], first));
}

static inline __attribute__((always_inline)) void loans_give_back(fa_heap_t *heap)
{
    if (!fa_option(block_loans))
        return;
    for (size_t bin = 0; bin < FA_BINS; bin++)
        loan_give_back(heap, bin);
}

/* Before the heap opens fresh memory of class bin: a loan from an idle heap's page, into
 * heap->loan[bin]; false if none was found. */
static bool take_loan(fa_heap_t *heap, size_t bin)
{
    if (!loans_allowed() || heap->loan[bin])
        return false;
    fa_heap_t *first = fa_atomic_load_acquire(&all_heaps);
    if (!first || !first->all_next)
        return false; /* one heap: nobody to borrow from */
    /* Blocks worth the look: an OS page of them, the memory the heap would touch. */
    size_t size = fa_bin_size(bin);
    uint32_t want = size >= FA_OS_PAGE ? 1 : (uint32_t)(FA_OS_PAGE / size);
    uint64_t now = _fa_os_now_ms();
    int looked = 0;
    for (fa_heap_t *other = first; other && looked < FA_LOAN_SCAN_HEAPS;
         other = other->all_next, looked++) {
        if (other == heap || now - fa_atomic_load_relaxed(&other->active_ms) < FA_LOAN_IDLE_MS)
            continue;
        fa_page_t *page = loan_candidate(other, bin, want);
        if (!page || !loan_page_fits(page, other, bin))
            continue;
        uintptr_t taken = fa_atomic_exchange_acquire(&page->xfree, 0);
        fa_block_t *list = fa_xfree_head(taken);
        if (list == FA_LIST_END)
            continue;
        /* The page may have been set up again meanwhile for another class (its stack emptied
         * first): its blocks then go back where they came from. */
        if (!loan_page_class(page, bin)) {
            loan_return(page, list);
            continue;
        }
        heap->loan[bin] = list;
        heap->loan_page[bin] = page;
        loan_count(bin, fa_xfree_count(taken));
        return true;
    }
    return false;
}

/* take_loan in _fa_heap_find_page: the class's slots must then name its queue's head, or the
 * empty page, not a page it borrowed from whose borrow just ended (the page a class opens
 * otherwise re-points them): so that its next malloc reaches the loan. */
static inline __attribute__((always_inline)) bool loan_instead(fa_heap_t *heap, size_t bin)
{
    /* Tested here, inline: with loans off (the default) the default mode runs none of their
     * code, which lies outside its hot text (cmake/hot-text.txt). */
    if (!fa_option(block_loans) || !take_loan(heap, bin))
        return false;
    queue_head_changed(heap, bin);
    return true;
}

void *_fa_heap_loan_pop(fa_heap_t *heap, size_t bin)
{
    fa_block_t *block = heap->loan[bin];
    fa_page_t *page = heap->loan_page[bin];
    fa_block_t *next = fa_link_decode(block->link);
    if (next != FA_LIST_END && !fa_page_has_block(page, (uintptr_t)next))
        _fa_free_list_corrupt(page, "remote free list");
    heap->loan[bin] = next == FA_LIST_END ? NULL : next;
    block->mark = 0;
    return block;
}

/* A queue's head is pinned, so that a malloc/free loop never gives its page away; but then the
 * head of a class the program has stopped using keeps its memory for good (a vector grown once
 * through the medium and big classes leaves an empty head in each). A head found empty at two
 * looks, FITALLOC_PURGE_DELAY or more apart, with nothing placed on its free list in between,
 * goes back to its segment, which hands its memory to the OS after the delay; with `all`
 * (fa_collect), every empty head goes now. */
void _fa_heap_release_idle_heads(fa_heap_t *heap, bool all)
{
    loans_give_back(heap);
    bool busy = !all && heap->idle_ticks - heap->idle_ticks_seen >= FA_IDLE_CLASS_TICKS;
    heap->idle_ticks_seen = heap->idle_ticks;
    for (size_t bin = 0; bin < FA_BINS; bin++) {
        fa_page_queue_t *q = &heap->queues[bin];
        fa_page_t *page = q->head;
        bool same = page && page == heap->idle_head[bin] && page->placed == heap->idle_placed[bin];
        bool unused = same && page->free == heap->idle_free[bin];
        bool idle = page && (all || same);
        if (idle) {
            /* With every freed block on `local`, used - pinned counts the live blocks only (a
             * page kept, being unused, loses nothing: its next malloc takes `local`). */
            _fa_page_collect(page);
            _fa_page_give_up_free(page);
            idle = page->used == page->pinned;
        }
        if (idle) {
            queue_remove(q, page);
            FA_ASSERT(page->used == 0);
            release_page(heap, page);
            queue_head_changed(heap, bin);
            page = q->head;
        }
        if (unused && busy) {
            hand_over_idle_class(heap, bin);
            page = q->head;
        }
        heap->idle_head[bin] = page;
        heap->idle_placed[bin] = page ? page->placed : 0;
        heap->idle_free[bin] = page ? page->free : NULL;
    }
}

/* The most blocks, live or on `free`, a head may count for _fa_heap_realloc_left to walk its
 * `free` list: the walk stays short, and a page with more is rarely about to be empty. */
#define FA_REALLOC_LEFT_MAX_BLOCKS 8

void _fa_heap_realloc_left(fa_heap_t *heap, fa_page_t *page)
{
    /* The owner word first: another heap's page may be set up again meanwhile, by its owner. */
    uintptr_t owner = fa_atomic_load_relaxed(&page->owner);
    if (fa_owner_heap(owner) != heap || (owner & FA_OWNER_FULL))
        return;
    size_t bin = page->bin;
    fa_page_queue_t *q = &heap->queues[bin];
    if (q->head != page || fa_page_count(page) > FA_REALLOC_LEFT_MAX_BLOCKS)
        return;
    _fa_page_give_up_free(page);
    if (fa_page_count(page) != 0)
        return;
    queue_remove(q, page);
    release_page(heap, page);
    queue_head_changed(heap, bin);
}

/* Slow-path calls between two readings of the clock for _fa_heap_release_idle_heads. */
#define FA_IDLE_CHECK_EVERY 64

static void maybe_release_idle_heads(fa_heap_t *heap)
{
    if (++heap->idle_ticks % FA_IDLE_CHECK_EVERY != 0)
        return;
    uint64_t now = _fa_os_now_ms();
    fa_atomic_store_relaxed(&heap->active_ms, now);
    if (now < heap->next_idle_check)
        return;
    heap->next_idle_check = now + (uint64_t)fa_option(purge_delay);
    _fa_guard_expire(now);
    _fa_heap_release_idle_heads(heap, false);
}

static void collect_notified(fa_heap_t *heap)
{
    if (!fa_atomic_load_relaxed(&heap->notified_pages))
        return;
    fa_page_t *page = fa_atomic_exchange_acquire(&heap->notified_pages, NULL);
    while (page) {
        fa_page_t *next = page->notify_next;
        fa_atomic_store_release(&page->notified, 0);
        /* A stale notice (the page changed hands since) is dropped. */
        if (fa_atomic_load_acquire(&page->owner) == (fa_owner_word(heap, page) | FA_OWNER_FULL))
            move_from_full(heap, page);
        page = next;
    }
}

void _fa_heap_take_remote_frees(fa_heap_t *heap)
{
    collect_notified(heap);
    for (size_t bin = 0; bin < FA_BINS; bin++) {
        fa_page_queue_t *q = &heap->queues[bin];
        fa_page_t *head = q->head;
        /* Behind the head, where a page may carry the sparse trigger (its `used` then counts
         * from the trigger): taken out, collected, and appended again unless it is empty. */
        for (fa_page_t *page = head ? head->next : NULL, *next; page; page = next) {
            next = page->next;
            if (!fa_atomic_load_relaxed(&page->xfree))
                continue;
            queue_remove(q, page);
            _fa_page_collect(page);
            if (page->used == 0)
                release_page(heap, page);
            else
                queue_append(heap, page);
        }
    }
}

void _fa_heap_notify(fa_page_t *page)
{
    if (fa_atomic_exchange_acq_rel(&page->notified, 1))
        return;
    uintptr_t owner = fa_atomic_load_acquire(&page->owner);
    fa_heap_t *heap = fa_owner_heap(owner);
    if (!(owner & FA_OWNER_FULL) || !heap) {
        fa_atomic_store_release(&page->notified, 0);
        return;
    }
    fa_page_t *head = fa_atomic_load_relaxed(&heap->notified_pages);
    do
        page->notify_next = head;
    while (!fa_atomic_cas_weak_release(&heap->notified_pages, &head, page));
}

void _fa_heap_local_free_full(fa_heap_t *heap, fa_page_t *page)
{
    move_from_full(heap, page);
}

/* Sparse candidates. A page whose blocks are all being freed (a tree destroyed, a batch of
 * blocks let go) passes its sparse trigger on its way to empty: given to the mesher there, it
 * would cost a walk of its blocks and send its last frees the remote way, for nothing. So a
 * page whose trigger fires stays in its queue, without a trigger, as a candidate; it goes to
 * the mesher once it has stayed sparse, neither emptied nor taken to serve mallocs (at its
 * queue's head), for FA_MESH_SETTLE_MS, or earlier when FA_SPARSE_CANDIDATES newer ones wait
 * behind it (few: a thread that frees a batch and then stops calling the allocator keeps them
 * until its next slow path). The candidates are looked at on the heap's slow paths: a
 * trigger, a malloc that needs another page, fa_collect(). */
#define FA_MESH_SETTLE_MS 10

/* Still the page it was when it became a candidate: the heap's, in its queue, not at the head,
 * not set up again since (which zeroes sparse_seen), with some blocks live but no more than
 * the trigger's count. */
static bool still_sparse(const fa_heap_t *heap, const fa_sparse_candidate_t *c)
{
    const fa_page_t *page = c->page;
    return fa_atomic_load_relaxed(&page->owner) == fa_owner_word(heap, page) &&
           page->sparse_seen == c->seen && !page->pinned && !page->sparse_at && page->used > 0 &&
           page->used <= fa_mesh_sparse_at(page);
}

static void candidate_pop(fa_heap_t *heap)
{
    fa_sparse_candidate_t c = heap->sparse[heap->sparse_first];
    heap->sparse_first = (heap->sparse_first + 1) % FA_SPARSE_CANDIDATES;
    heap->sparse_count--;
    if (!still_sparse(heap, &c))
        return;
    fa_page_t *page = c.page;
    page->sparse_seen = 0;
    fa_page_queue_t *q = &heap->queues[page->bin];
    if (!queue_has_spare(q, page))
        return;
    queue_remove(q, page);
    if (!_fa_mesh_detach(page))
        fa_page_queue_push_back(q, page); /* no record: it stays */
}

/* The candidates that waited long enough go to the mesher; with `all`, every one. */
void _fa_heap_settle_sparse(fa_heap_t *heap, bool all)
{
    if (!heap->sparse_count)
        return;
    uint32_t now = (uint32_t)_fa_os_now_ms();
    while (heap->sparse_count &&
           (all || now - heap->sparse[heap->sparse_first].since_ms >= FA_MESH_SETTLE_MS))
        candidate_pop(heap);
}

static void candidate_push(fa_heap_t *heap, fa_page_t *page)
{
    if (heap->sparse_count == FA_SPARSE_CANDIDATES)
        candidate_pop(heap);
    if (++heap->sparse_seen == 0)
        heap->sparse_seen = 1;
    page->sparse_seen = heap->sparse_seen;
    uint32_t at = (heap->sparse_first + heap->sparse_count) % FA_SPARSE_CANDIDATES;
    heap->sparse[at] = (fa_sparse_candidate_t){
        .page = page, .seen = page->sparse_seen, .since_ms = (uint32_t)_fa_os_now_ms()};
    heap->sparse_count++;
}

void _fa_heap_requeue(fa_heap_t *heap, fa_page_t *page)
{
    FA_ASSERT(page->used == 0 && heap->queues[page->bin].head != page);
    /* Not the head (a pinned head never reaches 0): a full page with blocks to hand out
     * again, or a page in the middle of its queue, empty, or at its sparse trigger. */
    if (fa_atomic_load_relaxed(&page->owner) & FA_OWNER_FULL) {
        move_from_full(heap, page);
        return;
    }
    if (page->sparse_at) {
        disarm_sparse(page);
        _fa_heap_settle_sparse(heap, false);
        candidate_push(heap, page);
        return;
    }
    queue_remove(&heap->queues[page->bin], page);
    release_page(heap, page);
}

void _fa_heap_adopt_pages(fa_heap_t *heap, fa_segment_t *seg)
{
    seg->heap = heap;
    seg->prev = NULL;
    seg->next = heap->segments[seg->kind];
    if (seg->next)
        seg->next->prev = seg;
    heap->segments[seg->kind] = seg;
    size_t live = fa_atomic_load_relaxed(&seg->used_pages);
    for (size_t i = 0; i < seg->page_count && live > 0; i++) {
        fa_page_t *page = &seg->pages[i];
        if (fa_atomic_load_acquire(&page->state) != FA_PAGE_USED)
            continue;
        live--;
        if (fa_atomic_load_acquire(&page->mesh))
            continue; /* the mesher's, wherever its segment goes */
        if (page->migrant)
            continue; /* pooled, or another heap's: page_pool.c */
        /* A page set up before tracing began (options read late) is traced from now on. */
        if (_fa_pages_slow)
            page->slow = 1;
        fa_atomic_store_release(&page->owner, fa_owner_word(heap, page));
        fa_page_set_thread(page, heap->thread);
        _fa_page_collect(page);
        if (page->used == 0) {
            release_page(heap, page); /* the last one may hand the whole segment to the cache */
            continue;
        }
        queue_append(heap, page);
        if (page->free == FA_LIST_END && page->local == FA_LIST_END &&
            page->capacity == page->reserved)
            move_to_full(heap, page);
        else
            queue_head_changed(heap, page->bin);
    }
}

/* Whether the page's next block would be provisioned over memory no block of it has used
 * since it was taken clean: fresh memory, which a loan may spare (take_loan). */
static bool extends_untouched(const fa_page_t *page)
{
    return page->capacity < page->reserved &&
           (size_t)page->capacity * page->block_size >= (size_t)page->touched * FA_OS_PAGE;
}

/* The same for a block big enough for that to matter: a block of a few OS pages or more. For
 * smaller blocks an extension touches one OS page, and a dirty page taken instead of it leaves
 * the head half used and takes a page other classes (other threads' heaps adopting ours) would
 * have filled whole, so the heap ends up holding more pages, not fewer. */
static bool extends_into_untouched(const fa_page_t *page)
{
    return page->block_size >= 4 * FA_OS_PAGE && extends_untouched(page);
}

fa_page_t *_fa_heap_find_page(fa_heap_t *heap, size_t bin)
{
    FA_ASSERT(heap == _fa_heap_tls && heap != &_fa_heap_empty && bin < FA_BINS);
    collect_notified(heap);
    maybe_release_idle_heads(heap);
    _fa_heap_settle_sparse(heap, false);
    fa_page_queue_t *q = &heap->queues[bin];
    fa_page_t *page;
    if (bin < FA_SMALL_BINS && heap->borrow[bin] == FA_BORROWING)
        heap->borrow[bin] = FA_BORROW_ENDED; /* its lender had no block for it */
    else if (!q->head && (page = borrow_page(heap, bin)))
        return page;
    for (;;) {
        while ((page = q->head)) {
            /* Freed blocks (the owner's, then remote ones) wait until `free` is used up. */
            if (_fa_page_refill(page))
                return page;
            /* Blocks freed in another page of the queue before fresh memory of this one: a
             * page that keeps extending while the others' freed blocks wait is how a heap
             * whose blocks are freed by other threads grows. */
            fa_page_t *other = queue_find_freed(page->next);
            if (other) {
                queue_remove(q, page);
                queue_append(heap, page);
                queue_remove(q, other);
                fa_page_queue_push_front(q, other);
                queue_head_changed(heap, bin);
                continue;
            }
            /* A free page of our segments not purged yet before memory of a page taken clean
             * that no block has used: extending that touches memory the program never had,
             * while the free page's is still resident (a merge's buffers, freed and made again,
             * spread over new memory at every round, up to 1.5 times as much). */
            if (extends_into_untouched(page) && (other = _fa_segment_dirty_page(heap, bin))) {
                _fa_page_init(other, heap, bin);
                queue_remove(q, page);
                queue_append(heap, page);
                fa_page_queue_push_front(q, other);
                queue_head_changed(heap, bin);
                /* Carved at once: back at the loop's top, an empty head could be moved behind
                 * a page with freed blocks, and an empty page may not stay queued. */
                if (_fa_page_extend(other))
                    return other;
                continue;
            }
            if (extends_untouched(page) && loan_instead(heap, bin))
                return NULL;
            if (_fa_page_extend(page))
                return page;
            move_to_full(heap, page);
        }
        /* A free page of our own segments first; then one abandoned segment of the right
         * kind (its live pages join our queues, its free pages become ours); a new segment
         * last. Adopting only when a new segment is the alternative leaves abandoned segments
         * to the threads that need them: a heap that adopted greedily would hoard them (with
         * their dirty pages), and each new thread would map a new segment. */
        /* Memory already touched before fresh memory: a page given to the mesher, a free page
         * of our own segments not purged yet, a pooled page (page_pool.c). A pooled page after
         * our own: taken first, it left our dirty pages unused until the purger took them. */
        page = _fa_mesh_reattach(heap, bin);
        if (!page && (page = _fa_segment_take_page(heap, bin, FA_PAGE_DIRTY)))
            break;
        if (!page)
            page = _fa_page_pool_take(heap, bin);
        if (page) {
            fa_page_queue_push_front(q, page);
            queue_head_changed(heap, bin);
            if (_fa_page_refill(page))
                return page;
            continue;
        }
        if (loan_instead(heap, bin))
            return NULL;
        page = _fa_segment_take_page(heap, bin, FA_PAGE_CLEAN);
        if (page)
            break;
        fa_segment_t *seg = _fa_segment_pop_abandoned(fa_bin_kind(bin));
        if (!seg)
            break;
        _fa_heap_adopt_pages(heap, seg);
    }
    if (!page)
        page = _fa_segment_new_page(heap, bin);
    /* Out of memory: pages given to the mesher may have been emptied since its last pass. */
    if (!page && _fa_mesh_reclaim())
        return _fa_heap_find_page(heap, bin);
    if (!page)
        return NULL;
    _fa_page_init(page, heap, bin);
    bool provisioned = _fa_page_extend(page);
    fa_page_queue_push_front(q, page);
    queue_head_changed(heap, bin);
    return provisioned ? page : NULL; /* NULL: no memory to open the page with */
}

/* Set once this thread's exit hook has given its heap up. The frees it still makes (other
 * libraries' thread destructors) then count in the shared counters instead of taking a heap,
 * which would hold a parked heap's memory only to be parked again, or make a new one. */
static __thread bool thread_ended __attribute__((tls_model("initial-exec")));

fa_heap_t *_fa_heap_for_counting(void)
{
    fa_heap_t *heap = _fa_heap_tls;
    if (heap != &_fa_heap_empty)
        return heap;
    return thread_ended ? NULL : _fa_heap_init_thread();
}

/* With the global lock held: take the heap *link off the parked list. */
static fa_heap_t *unpark_locked(fa_heap_t **link)
{
    fa_heap_t *heap = *link;
    *link = heap->pool_next;
    heap->pool_next = NULL;
    parked_count--;
    return heap;
}

/* Set the thread word of every page on the heap's queues (a parked heap has some); clearing
 * them, those of its full pages too. A full page left without one comes back to its queue at
 * its next free (free.c: free_local). */
static void set_threads(fa_heap_t *heap, uintptr_t thread)
{
    heap->thread = thread;
    for (size_t bin = 0; bin < FA_BINS; bin++)
        for (fa_page_t *page = heap->queues[bin].head; page; page = page->next)
            fa_page_set_thread(page, thread);
    if (!thread)
        for (fa_page_t *page = heap->full.head; page; page = page->next)
            fa_page_set_thread(page, 0);
}

static fa_heap_t *start_using(fa_heap_t *heap)
{
    /* A thread past its exit hook may end without running it again, so without clearing its
     * pages' thread words: its heap's frees take the slow path. */
    set_threads(heap, thread_ended ? 0 : fa_thread_pointer());
    thread_ended = false;
    _fa_heap_tls = heap;
    /* May allocate (thread keys beyond the first 32): the TLS pointer is already set, so that
     * works. */
    _fa_thread_watch_exit();
    fa_count(threads, 1);
    return heap;
}

fa_heap_t *_fa_heap_init_thread(void)
{
    _fa_process_init();
    if (_fa_mode->heapless)
        return NULL; /* the mode serves every allocation: no heaps of the core */
    fa_mutex_lock(&_fa_global_lock);
    /* Not for a thread past its exit hook, which may end without running it again. */
    fa_heap_t *heap = !thread_ended && parked ? unpark_locked(&parked) : NULL;
    if (heap) {
        fa_mutex_unlock(&_fa_global_lock);
        return start_using(heap);
    }
    heap = pool;
    if (heap)
        pool = heap->pool_next;
    else
        heap = carve_heap_locked();
    fa_mutex_unlock(&_fa_global_lock);
    if (!heap) {
        /* Heap structures are never unmapped: a remote thread may still read one. */
        size_t chunk = 64 << 10;
        char *mem = _fa_os_map_aligned(chunk, FA_OS_PAGE);
        if (!mem)
            return NULL;
        fa_mutex_lock(&_fa_global_lock);
        /* Another thread may have mapped a chunk meanwhile: its structures are used first. */
        heap = carve_heap_locked();
        bool raced = heap != NULL;
        if (!raced) {
            carve_next = mem;
            carve_end = mem + chunk;
            heap = carve_heap_locked();
        }
        fa_mutex_unlock(&_fa_global_lock);
        if (raced)
            _fa_os_unmap(mem, chunk); /* never seen by another thread */
    }
    /* notified_pages is kept: stale notices in it still have to clear their pages' flags. */
    memset(heap->queues, 0, sizeof heap->queues);
    memset(&heap->full, 0, sizeof heap->full);
    memset(heap->segments, 0, sizeof heap->segments);
    memset(heap->idle_head, 0, sizeof heap->idle_head);
    memset(heap->borrow, 0, sizeof heap->borrow);
    heap->sparse_count = 0;
    heap->pool_next = NULL;
    heap->next_purge = 0;
    for (size_t i = 0; i < FA_DIRECT_SLOTS; i++)
        heap->direct[i] = &_fa_page_empty;
    for (size_t bin = 0; bin < FA_BINS; bin++)
        heap->bin_page[bin] = &_fa_page_empty;
    return start_using(heap);
}

static void abandon_page(fa_heap_t *heap, fa_page_t *page)
{
    _fa_page_give_up_free(page);
    _fa_page_collect(page);
    /* A page kept loses its heap, but a slow page stays slow: the frees other threads make into
     * it meanwhile must take the checked way (secure mode), not the plain remote push. */
    if (page->used == 0)
        release_page(heap, page);
    else if (page->migrant)
        _fa_page_pool_put(page); /* its segment is not this heap's: no one would adopt it */
    else
        fa_atomic_store_release(&page->owner, fa_owner_word(NULL, page));
}

/* Give a heap that no thread uses any more away: its empty pages to their segments, its live
 * pages and segments to the abandoned list, the structure to the pool. */
static void abandon(fa_heap_t *heap)
{
    FA_ASSERT(heap->thread == 0); /* its thread left it (leave_mine): no page has a thread word */
    loans_give_back(heap);
    collect_notified(heap);
    for (size_t bin = 0; bin < FA_BINS; bin++) {
        fa_page_t *page;
        while ((page = heap->queues[bin].head)) {
            queue_remove(&heap->queues[bin], page);
            abandon_page(heap, page);
        }
    }
    fa_page_t *page;
    while ((page = heap->full.head)) {
        queue_remove(&heap->full, page);
        abandon_page(heap, page);
    }
    /* Notices that raced with the loop above: clear their flags so new owners get notices. */
    page = fa_atomic_exchange_acquire(&heap->notified_pages, NULL);
    for (fa_page_t *next; page; page = next) {
        next = page->notify_next;
        fa_atomic_store_release(&page->notified, 0);
    }
    for (int kind = 0; kind < FA_SEG_LARGE; kind++) {
        fa_segment_t *seg;
        while ((seg = heap->segments[kind])) {
            heap->segments[kind] = seg->next;
            _fa_segment_abandon(seg);
        }
    }
    fa_mutex_lock(&_fa_global_lock);
    for (size_t bin = 0; bin < FA_BINS; bin++) {
        fa_atomic_add_relaxed(&_fa_counters.remote_frees[bin], heap->remote_frees[bin]);
        heap->remote_frees[bin] = 0;
    }
    heap->pool_next = pool;
    pool = heap;
    fa_mutex_unlock(&_fa_global_lock);
}

/* The calling thread's heap, which it stops using. */
static fa_heap_t *leave_mine(void)
{
    fa_heap_t *heap = _fa_heap_tls;
    if (heap == &_fa_heap_empty)
        return NULL;
    const struct fa_mode_pages *own = fa_mode_pages();
    if (own)
        own->heap_leaving(heap);
    _fa_heap_tls = &_fa_heap_empty;
    set_threads(heap, 0);
    return heap;
}

void _fa_heap_abandon_mine(void)
{
    fa_heap_t *heap = leave_mine();
    if (heap)
        abandon(heap);
}

bool _fa_heap_take_parked(fa_heap_t *heap)
{
    if (thread_ended || _fa_mode->heapless)
        return false;
    fa_mutex_lock(&_fa_global_lock);
    fa_heap_t **link = &parked;
    while (*link && *link != heap)
        link = &(*link)->pool_next;
    bool found = *link != NULL;
    if (found)
        unpark_locked(link);
    fa_mutex_unlock(&_fa_global_lock);
    if (found)
        start_using(heap);
    return found;
}

void _fa_heap_thread_ended(void)
{
    if (_fa_heap_tls != &_fa_heap_empty) {
        /* What the heap leaves (parked, or its empty pages released) is the purger's: it
         * starts now, while this thread still has its heap, as pthread_create allocates. */
        _fa_purge_want();
        _fa_purge_start_point();
    }
    thread_ended = true;
    fa_heap_t *heap = leave_mine();
    if (!heap)
        return;
    loans_give_back(heap); /* the blocks serve their page's owner, not a heap left waiting */
    fa_mutex_lock(&_fa_global_lock);
    bool park = parked_count < (size_t)fa_option(parked_heaps);
    if (park) {
        heap->parked_at = _fa_os_now_ms();
        heap->pool_next = parked;
        parked = heap;
        parked_count++;
    }
    fa_mutex_unlock(&_fa_global_lock);
    if (park)
        _fa_purge_kick(); /* it abandons the heap if no thread comes for it */
    else
        abandon(heap);
}

void _fa_heaps_unpark_expired(uint64_t now, bool force, long *next)
{
    uint64_t keep = (uint64_t)fa_option(purge_delay) * 10;
    fa_mutex_lock(&_fa_global_lock);
    /* Newest first: cut the list at the first expired heap (the older ones are expired too);
     * the last one kept is the next to expire. */
    fa_heap_t **link = &parked, *oldest_kept = NULL;
    while (*link && !force && (*link)->parked_at + keep > now) {
        oldest_kept = *link;
        link = &(*link)->pool_next;
    }
    fa_heap_t *expired = *link;
    *link = NULL;
    for (fa_heap_t *h = expired; h; h = h->pool_next)
        parked_count--;
    if (oldest_kept)
        fa_purge_note_due(next, oldest_kept->parked_at + keep, now);
    fa_mutex_unlock(&_fa_global_lock);
    /* Taken off the list, each is ours alone: abandon takes the lock itself. */
    for (fa_heap_t *h = expired, *after; h; h = after) {
        after = h->pool_next;
        h->pool_next = NULL;
        abandon(h);
    }
}

void _fa_heaps_foreach(void (*fn)(const fa_heap_t *heap, void *arg), void *arg)
{
    fa_mutex_lock(&_fa_global_lock);
    for (fa_heap_t *heap = all_heaps; heap; heap = heap->all_next)
        fn(heap, arg);
    fa_mutex_unlock(&_fa_global_lock);
}

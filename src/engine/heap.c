/* Thread heaps: each thread allocates from its own heap, reached through initial-exec TLS.
 *
 * The TLS pointer starts at a static empty heap whose every direct slot points to an empty
 * page, so the malloc fast path needs no NULL test: the first allocation of a thread fails
 * the fast path and lands in _fa_malloc_generic, which sets up the real heap.
 *
 * Per size class the heap keeps a queue of pages with free blocks; malloc serves from the head.
 * The head is "pinned": its `used` carries +1, so freeing its last block never reaches 0 on
 * the fast path and a malloc/free loop on one block never gives its page away. Pages without
 * a free block sit on the full list with FA_OWNER_FULL set in their owner word; a remote free
 * into such a page pushes it onto `notified_pages`, and the owner moves it back.
 */
#include <string.h>

#include "engine/engine.h"
#include "engine/size_class.h"
#include "platform/atomic.h"

__thread fa_heap_t *_fa_heap_tls __attribute__((tls_model("initial-exec"))) = &_fa_heap_empty;
fa_page_t _fa_page_empty;
fa_heap_t _fa_heap_empty = {.direct = {[0 ... FA_DIRECT_SLOTS - 1] = &_fa_page_empty}};

static fa_heap_t *pool;
static fa_heap_t *all_heaps;

static void queue_push_back(fa_page_queue_t *q, fa_page_t *page)
{
    page->next = NULL;
    page->prev = q->tail;
    if (q->tail)
        q->tail->next = page;
    else
        q->head = page;
    q->tail = page;
}

static void queue_push_front(fa_page_queue_t *q, fa_page_t *page)
{
    page->prev = NULL;
    page->next = q->head;
    if (q->head)
        q->head->prev = page;
    else
        q->tail = page;
    q->head = page;
}

/* Unlink page; a pinned head loses its +1 (the caller checks `used` for 0). */
static void queue_remove(fa_page_queue_t *q, fa_page_t *page)
{
    if (page->prev)
        page->prev->next = page->next;
    else
        q->head = page->next;
    if (page->next)
        page->next->prev = page->prev;
    else
        q->tail = page->prev;
    page->next = page->prev = NULL;
    if (page->pinned) {
        page->pinned = 0;
        page->used--;
    }
}

/* After any change to a queue: pin its head and point the direct slots of its sizes at it. */
static void queue_head_changed(fa_heap_t *heap, size_t bin)
{
    fa_page_t *head = heap->queues[bin].head;
    if (head && !head->pinned) {
        head->pinned = 1;
        head->used++;
    }
    size_t size = fa_bin_size(bin);
    if (size > FA_DIRECT_MAX)
        return;
    /* Slot k serves requests of 16(k-1)+1 .. 16k bytes (slot 0: malloc(0)). */
    size_t first = bin ? fa_bin_size(bin - 1) / FA_ALIGN + 1 : 0;
    for (size_t slot = first; slot <= size / FA_ALIGN; slot++)
        heap->direct[slot] = head && !head->slow ? head : &_fa_page_empty;
}

static void release_page(fa_heap_t *heap, fa_page_t *page)
{
    fa_segment_t *seg = (fa_segment_t *)((uintptr_t)page & ~FA_SEG_MASK);
    _fa_segment_release_page(page);
    if (seg->used_pages == 0) {
        fa_segment_list_remove(&heap->segments[seg->kind], seg);
        _fa_segment_release(seg);
    }
}

/* Owner side of the full-page protocol. Publishing FA_OWNER_FULL and then reading xfree, both
 * sequentially consistent, pairs with the remote side's push-then-read: at least one of the two
 * sees the other, so a remote free can never be stranded on a full page nobody looks at. */
static void move_to_full(fa_heap_t *heap, fa_page_t *page)
{
    queue_remove(&heap->queues[page->bin], page);
    queue_push_back(&heap->full, page);
    fa_atomic_store_seq_cst(&page->owner, fa_owner_word(heap, page) | FA_OWNER_FULL);
    if (fa_atomic_load_seq_cst(&page->xfree)) {
        fa_atomic_store_relaxed(&page->owner, fa_owner_word(heap, page));
        queue_remove(&heap->full, page);
        queue_push_back(&heap->queues[page->bin], page);
    }
    queue_head_changed(heap, page->bin);
}

/* A page leaves the full list: back to its queue, or to its segment if it is empty. */
static void move_from_full(fa_heap_t *heap, fa_page_t *page)
{
    fa_atomic_store_relaxed(&page->owner, fa_owner_word(heap, page));
    queue_remove(&heap->full, page);
    _fa_page_collect(page);
    if (page->used == 0) {
        release_page(heap, page);
        return;
    }
    queue_push_back(&heap->queues[page->bin], page);
    queue_head_changed(heap, page->bin);
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

void _fa_heap_page_emptied(fa_heap_t *heap, fa_page_t *page)
{
    FA_ASSERT(page->used == 0 && heap->queues[page->bin].head != page);
    /* Not the head (a pinned head never reaches 0) and not full (full pages take the slow
     * path): it is a page in the middle of its queue. */
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
    size_t live = seg->used_pages;
    for (size_t i = 0; i < seg->page_count && live > 0; i++) {
        fa_page_t *page = &seg->pages[i];
        if (fa_atomic_load_acquire(&page->state) != FA_PAGE_USED)
            continue;
        live--;
        /* A page set up before tracing began (options read late) is traced from now on. */
        if (_fa_tracing)
            page->slow = 1;
        fa_atomic_store_release(&page->owner, fa_owner_word(heap, page));
        _fa_page_collect(page);
        if (page->used == 0) {
            release_page(heap, page); /* the last one may hand the whole segment to the cache */
            continue;
        }
        queue_push_back(&heap->queues[page->bin], page);
        if (!page->free && page->capacity == page->reserved)
            move_to_full(heap, page);
        else
            queue_head_changed(heap, page->bin);
    }
}

fa_page_t *_fa_heap_find_page(fa_heap_t *heap, size_t bin)
{
    FA_ASSERT(heap == _fa_heap_tls && heap != &_fa_heap_empty && bin < FA_BINS);
    collect_notified(heap);
    fa_page_queue_t *q = &heap->queues[bin];
    fa_page_t *page;
    for (;;) {
        while ((page = q->head)) {
            /* Remote frees wait until the local list is used up: then they need no walk. */
            if (!page->free)
                _fa_page_collect(page);
            if (page->free || _fa_page_extend(page))
                return page;
            move_to_full(heap, page);
        }
        /* A free page of our own segments first; then one abandoned segment of the right
         * kind (its live pages join our queues, its free pages become ours); a new segment
         * last. Adopting only when a new segment is the alternative leaves abandoned segments
         * to the threads that need them: a heap that adopted greedily would hoard them (with
         * their dirty pages), and each new thread would map a new segment. */
        page = _fa_segment_take_page(heap, bin);
        if (page)
            break;
        fa_segment_t *seg = _fa_segment_pop_abandoned(fa_bin_kind(bin));
        if (!seg)
            break;
        _fa_heap_adopt_pages(heap, seg);
    }
    if (!page)
        page = _fa_segment_new_page(heap, bin);
    if (!page)
        return NULL;
    _fa_page_extend(page);
    queue_push_front(q, page);
    queue_head_changed(heap, bin);
    return page;
}

fa_heap_t *_fa_heap_init_thread(void)
{
    _fa_process_init();
    if (_fa_mode)
        return NULL; /* the other mode owns all allocation: no fast-engine heaps */
    fa_mutex_lock(&_fa_global_lock);
    fa_heap_t *heap = pool;
    if (heap)
        pool = heap->pool_next;
    fa_mutex_unlock(&_fa_global_lock);
    if (!heap) {
        /* Heap structures are never unmapped: a remote thread may still read one. */
        size_t chunk = 64 << 10;
        char *mem = _fa_os_map_aligned(chunk, FA_OS_PAGE);
        if (!mem)
            return NULL;
        size_t count = chunk / sizeof(fa_heap_t);
        fa_mutex_lock(&_fa_global_lock);
        for (size_t i = 0; i < count; i++) {
            fa_heap_t *each = (fa_heap_t *)(mem + i * sizeof(fa_heap_t));
            each->all_next = all_heaps;
            all_heaps = each;
            if (i > 0) {
                each->pool_next = pool;
                pool = each;
            }
        }
        fa_mutex_unlock(&_fa_global_lock);
        heap = (fa_heap_t *)mem;
    }
    /* notified_pages is kept: stale notices in it still have to clear their pages' flags. */
    memset(heap->queues, 0, sizeof heap->queues);
    memset(&heap->full, 0, sizeof heap->full);
    memset(heap->segments, 0, sizeof heap->segments);
    heap->pool_next = NULL;
    heap->next_purge = 0;
    for (size_t i = 0; i < FA_DIRECT_SLOTS; i++)
        heap->direct[i] = &_fa_page_empty;
    _fa_heap_tls = heap;
    /* May allocate (thread keys beyond the first 32): the TLS pointer is already set, so that
     * works. */
    _fa_thread_watch_exit();
    fa_count(threads, 1);
    return heap;
}

static void abandon_page(fa_heap_t *heap, fa_page_t *page)
{
    _fa_page_collect(page);
    if (page->used == 0)
        release_page(heap, page);
    else
        fa_atomic_store_release(&page->owner, 0);
}

void _fa_heap_abandon(fa_heap_t *heap)
{
    if (heap == &_fa_heap_empty)
        return;
    _fa_secure_flush(heap);
    _fa_heap_tls = &_fa_heap_empty;
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

void _fa_heaps_foreach(void (*fn)(const fa_heap_t *heap, void *arg), void *arg)
{
    fa_mutex_lock(&_fa_global_lock);
    for (fa_heap_t *heap = all_heaps; heap; heap = heap->all_next)
        fn(heap, arg);
    fa_mutex_unlock(&_fa_global_lock);
}

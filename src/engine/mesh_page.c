/* Detached pages (mesh.h): pages a heap gave to the mesher, and back.
 *
 * The holder of a page detaches it, so nothing it does races with the change: a heap on its own
 * thread (its page, out of its queue first: heap.c, at the sparse trigger), or a mesh pass for
 * a page of the page pool, which no heap holds (taken out of the pool under the pool's lock
 * first: _fa_mesh_detach_pooled). Then its free lists become the bitmap of live blocks, then its
 * owner word sends every later free the remote way. Pages that changed owner (migrants) are
 * detached as any other: each of their blocks still returns to them. The
 * record goes onto a lock-free stack, so that a detaching thread never waits for a mesh pass;
 * the mesher moves the records to their class's list under _fa_mesh_lock. A heap takes a page
 * back with that lock tried, never waited for: during a pass it takes a fresh page instead. */
#include "engine/mesh.h"

#include "common/options.h"
#include "engine/free_list.h"
#include "platform/atomic.h"

bool _fa_mesh_on FA_BSS_FIRST;
fa_mutex_t _fa_mesh_lock = FA_MUTEX_INIT;
fa_mesh_page_t *_fa_mesh_pages[FA_SMALL_BINS];
static fa_mesh_page_t *detached; /* lock-free stack of records not on their list yet */
static fa_mesh_page_t *pool;     /* unused records, under pool_lock */
static fa_mutex_t pool_lock = FA_MUTEX_INIT;

void _fa_mesh_init(void)
{
    /* Huge pages would be split by every mesh; debugging-tool builds hold block 0 back, which
     * the bitmap would count live; a kernel with pages larger than a frame (aarch64's 16 and
     * 64 KiB) cannot map one frame apart. */
    bool tools = false;
#ifdef FA_TOOLS
    tools = true;
#endif
    const char *off = fa_option(huge_pages)                 ? "FITALLOC_HUGE_PAGES=1"
                      : tools                               ? "a debugging-tools build"
                      : _fa_os_page_size() != FA_MESH_FRAME ? "the kernel's pages are not 4 KiB"
                                                            : NULL;
    _fa_mesh_on = fa_option(mesh) && !off;
    if (fa_option(mesh) && off && fa_option(verbose))
        _fa_message(2, "fitalloc: meshing off: %s\n", off);
}

/* Records are pooled and never unmapped: a free path may still read one it found in a page.
 * Carved from their chunk one at a time, so that a program that detaches a few pages touches
 * only their records' memory. */
static fa_mesh_page_t *record_new(void)
{
    static char *chunk;
    static size_t chunk_left;
    fa_mutex_lock(&pool_lock);
    fa_mesh_page_t *rec = pool;
    if (rec) {
        pool = rec->next;
    } else {
        if (chunk_left < sizeof *rec) {
            chunk_left = 256 << 10;
            chunk = _fa_os_map_aligned(chunk_left, FA_OS_PAGE);
            if (!chunk)
                chunk_left = 0;
        }
        if (chunk_left >= sizeof *rec) {
            rec = (fa_mesh_page_t *)chunk;
            chunk += sizeof *rec;
            chunk_left -= sizeof *rec;
        }
    }
    fa_mutex_unlock(&pool_lock);
    return rec;
}

static void record_free(fa_mesh_page_t *rec)
{
    fa_mutex_lock(&pool_lock);
    rec->next = pool;
    pool = rec;
    fa_mutex_unlock(&pool_lock);
}

static void bit_clear(uint64_t *words, size_t i)
{
    fa_atomic_store_relaxed(&words[i / 64], words[i / 64] & ~((uint64_t)1 << (i % 64)));
}

bool _fa_mesh_detach(fa_page_t *page)
{
    FA_ASSERT(!page->pinned && !page->sparse_at && !page->slow && page->bin < FA_SMALL_BINS);
    fa_mesh_page_t *rec = record_new();
    if (!rec)
        return false;
    _fa_page_give_up_free(page);
    _fa_page_collect(page);
    /* Every block provisioned is live but those on `local`, which is dropped. */
    size_t capacity = page->capacity;
    for (size_t w = 0; w < FA_MESH_SLOTS / 64; w++) {
        size_t first = w * 64;
        rec->live[w] = first + 64 <= capacity ? UINT64_MAX
                       : first < capacity     ? ((uint64_t)1 << (capacity - first)) - 1
                                              : 0;
    }
    size_t freed = 0;
    for (fa_block_t *b = page->local; b != FA_LIST_END; b = fa_link_decode(b->link)) {
        size_t slot = fa_mesh_slot(page, (uintptr_t)b);
        if (!fa_page_has_block(page, (uintptr_t)b) || !fa_mesh_live(rec, slot))
            _fa_free_list_corrupt(page, "free list");
        bit_clear(rec->live, slot);
        freed++;
    }
    if (capacity - freed != page->used)
        _fa_free_list_corrupt(page, "free list");
    page->local = FA_LIST_END;
    page->fresh = 0; /* its frames may come to hold another page's blocks, past its capacity */
    rec->page = page;
    rec->shared = rec->returned = rec->prepared = rec->moving = 0;
    rec->region = FA_MESH_NO_REGION;
    rec->changed = true;
    for (size_t k = 0; k < FA_MESH_FRAMES; k++)
        rec->frames[k] = (fa_mesh_frame_t){.rec = rec, .index = (uint32_t)k};
    /* The record before the owner word: a free that sees the word reads the record. */
    fa_atomic_store_release(&page->mesh, rec);
    fa_atomic_store_relaxed(&page->thread, 0);
    fa_atomic_store_release(&page->owner, FA_OWNER_SLOW);
    fa_mesh_page_t *head = fa_atomic_load_relaxed(&detached);
    do
        rec->next = head;
    while (!fa_atomic_cas_weak_release(&detached, &head, rec));
    fa_count(mesh_detached, 1);
    _fa_purge_kick();
    return true;
}

void _fa_mesh_detach_pooled(void)
{
    for (fa_page_t *page = _fa_page_pool_take_sparse(), *next; page; page = next) {
        next = page->next;
        page->next = NULL;
        if (!_fa_mesh_detach(page))
            _fa_page_pool_put(page); /* no record: back where it was */
    }
}

static void list_push(fa_mesh_page_t *rec)
{
    fa_mesh_page_t **list = &_fa_mesh_pages[rec->page->bin];
    rec->prev = NULL;
    rec->next = *list;
    if (*list)
        (*list)->prev = rec;
    *list = rec;
}

static void list_remove(fa_mesh_page_t *rec)
{
    if (rec->prev)
        rec->prev->next = rec->next;
    else
        _fa_mesh_pages[rec->page->bin] = rec->next;
    if (rec->next)
        rec->next->prev = rec->prev;
}

void _fa_mesh_take_detached(void)
{
    fa_mesh_page_t *rec = fa_atomic_exchange_acquire(&detached, NULL);
    for (fa_mesh_page_t *next; rec; rec = next) {
        next = rec->next;
        list_push(rec);
    }
}

void _fa_mesh_collect(fa_mesh_page_t *rec)
{
    fa_page_t *page = rec->page;
    if (!fa_atomic_load_relaxed(&page->xfree))
        return;
    /* Acquire pairs with the remote push: the blocks' links are visible. */
    uintptr_t taken = fa_atomic_exchange_acquire(&page->xfree, 0);
    uint32_t count = fa_xfree_count(taken);
    fa_block_t *b = fa_xfree_head(taken);
    /* Every live block freed (a program freeing a whole structure): the page goes as it is,
     * without reading each freed block for its bitmap bit (a block freed twice would make
     * more frees than live blocks, and is looked for below). */
    if (count == page->used) {
        page->used = 0;
        page->xcollected += count;
        return;
    }
    for (uint32_t i = 0; i < count; i++) {
        if (!fa_page_has_block(page, (uintptr_t)b))
            _fa_free_list_corrupt(page, "remote free list");
        size_t slot = fa_mesh_slot(page, (uintptr_t)b);
        /* Two frees of one block that both passed the free path's test at once. */
        if (!fa_mesh_live(rec, slot))
            _fa_double_free("free", b, page->block_size);
        bit_clear(rec->live, slot);
        b = fa_link_decode(b->link);
    }
    page->used = (uint16_t)(page->used - count);
    page->xcollected += count;
    rec->changed = true;
}

/* Frames given back while detached are the page's own memory again (zero until touched). */
static void frames_back(fa_mesh_page_t *rec)
{
    _fa_stats_commit((int64_t)__builtin_popcount(rec->returned) * FA_MESH_FRAME);
    fa_count(mesh_returned,
             (uint64_t) - (int64_t)__builtin_popcount(rec->returned) * FA_MESH_FRAME);
    rec->returned = 0;
}

void _fa_mesh_release(fa_mesh_page_t *rec)
{
    fa_page_t *page = rec->page;
    FA_ASSERT(page->used == 0);
    _fa_mesh_unmesh(rec);
    frames_back(rec);
    list_remove(rec);
    fa_atomic_store_release(&page->mesh, NULL);
    fa_count(mesh_detached, (uint64_t)-1);
    _fa_segment_release_page(page);
    record_free(rec);
}

fa_page_t *_fa_mesh_reattach(fa_heap_t *heap, size_t bin)
{
    if (!_fa_mesh_on || bin >= FA_SMALL_BINS || !fa_mutex_trylock(&_fa_mesh_lock))
        return NULL;
    _fa_mesh_take_detached();
    fa_mesh_page_t *rec = _fa_mesh_pages[bin];
    fa_page_t *page = NULL;
    for (fa_mesh_page_t *next; rec; rec = next) {
        next = rec->next;
        fa_segment_t *seg = (fa_segment_t *)((uintptr_t)rec->page & ~FA_SEG_MASK);
        /* A page of our own segments, or a migrant (page_pool.c), which stays one: release_page
         * (heap.c) hands an emptied segment back through its owner's list, and an emptied
         * migrant to the pool. */
        if (rec->shared || (seg->heap != heap && !rec->page->migrant))
            continue;
        _fa_mesh_collect(rec);
        if (rec->page->used == 0) {
            _fa_mesh_release(rec);
            continue;
        }
        page = rec->page;
        break;
    }
    if (!page) {
        fa_mutex_unlock(&_fa_mesh_lock);
        return NULL;
    }
    FA_ASSERT(rec->region == FA_MESH_NO_REGION); /* no frame of it was ever shared */
    frames_back(rec);
    list_remove(rec);
    fa_mutex_unlock(&_fa_mesh_lock);
    /* The free blocks, in address order, become `local`: the page's memory is all its own. */
    fa_block_t *list = FA_LIST_END;
    uintptr_t mark = fa_page_mark(page);
    for (size_t slot = page->capacity; slot-- > 0;) {
        if (fa_mesh_live(rec, slot))
            continue;
        fa_block_t *b = (fa_block_t *)(page->start + slot * page->block_size);
        b->link = fa_link_encode(list);
        b->mark = mark;
        list = b;
    }
    page->local = list;
    if (page->mesh_returns < 3)
        page->mesh_returns++;
    fa_atomic_store_release(&page->mesh, NULL);
    fa_atomic_store_release(&page->owner, fa_owner_word(heap, page));
    fa_page_set_thread(page, heap->thread);
    fa_count(mesh_detached, (uint64_t)-1);
    record_free(rec);
    return page;
}

void _fa_mesh_fork_prepare(void)
{
    fa_mutex_lock(&_fa_mesh_lock);
    fa_mutex_lock(&pool_lock);
}

void _fa_mesh_fork_parent(void)
{
    fa_mutex_unlock(&pool_lock);
    fa_mutex_unlock(&_fa_mesh_lock);
}

void _fa_mesh_fork_child(void)
{
    fa_mutex_reset(&pool_lock);
    fa_mutex_reset(&_fa_mesh_lock);
}

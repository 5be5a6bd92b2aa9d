/* The classic heap (classic_heap.h): blocks with boundary tags, split on allocation, coalesced
 * with both neighbours on free, the break growing when no free block fits. */
#include "lab/heap/classic_heap.h"
#include "lab/heap/buddy.h"
#include "lab/heap/heap_blocks.h"
#include "lab/heap/slab.h"

#include <string.h>

#include "common/message.h"
#include "platform/arch.h"
#include "platform/compiler.h"
#include "platform/os.h"
#include "platform/atomic.h"

/* ---- free, split, grow ---- */

/* Turn the block (a valid header, not in the index) into a free block in the index, merging
 * it with free neighbours when coalescing is on. */
static void free_block(fa_classic_heap *h, uintptr_t block)
{
    if (fa_heap_is_buddy(h)) {
        _fa_buddy_free(h, block);
        return;
    }
    if (fa_heap_is_slab(h)) {
        _fa_slab_free(h, block);
        return;
    }
    size_t size = fa_block_size(block);
    uintptr_t next = block + size;
    if (h->cfg.coalesce) {
        bool next_free = next != h->brk && fa_block_is_free(next);
        if (fa_block_prev_is_free(block)) {
            /* Merge into the previous block, which keeps its address (and place in an
             * address-ordered index). */
            uintptr_t prev = block - fa_block_prev_size(block);
            size_t prev_size = fa_block_size(prev), merged = prev_size + size;
            /* The header left inside the merged block still says "freed": freeing this
             * pointer again is reported as a double free. */
            fa_block_set_size(block, size, true);
            fa_block_set_word1(block, FA_FREE_TAG);
            if (next_free) {
                merged += fa_block_size(next);
                fa_heap_index_remove(h, next);
                FA_HEAP_COUNT(h, coalesces, 1);
                FA_HEAP_COUNT(h, blocks, -1);
            }
            fa_heap_mark_free(prev, merged);
            fa_heap_index_resized(h, prev, prev_size);
            fa_heap_set_prev_free_of(h, prev + merged, true);
            FA_HEAP_COUNT(h, coalesces, 1);
            FA_HEAP_COUNT(h, blocks, -1);
            return;
        }
        if (next_free) {
            /* Absorb the next block: this one takes its place in the index. */
            fa_heap_mark_free(block, size + fa_block_size(next));
            fa_heap_index_replace(h, next, block);
            FA_HEAP_COUNT(h, coalesces, 1);
            FA_HEAP_COUNT(h, blocks, -1);
            return;
        }
    }
    fa_heap_mark_free(block, size);
    fa_heap_set_prev_free_of(h, next, true);
    fa_heap_index_insert(h, block);
}

/* Cut a used block down to `size` bytes when the rest can be a block of its own; the rest is
 * freed (and merges with a free next neighbour, as after realloc shrinking). */
static void split(fa_classic_heap *h, uintptr_t block, size_t size)
{
    size_t total = fa_block_size(block);
    if (total - size < FA_BLOCK_MIN)
        return;
    fa_block_set_size(block, size, false);
    uintptr_t rest = block + size;
    fa_heap_write_header(rest, total - size, false, false);
    FA_HEAP_COUNT(h, splits, 1);
    FA_HEAP_COUNT(h, blocks, 1);
    free_block(h, rest);
}

bool _fa_heap_extend_break(fa_classic_heap *h, size_t add)
{
    if (add > h->limit - h->brk)
        return false;
    uintptr_t new_brk = h->brk + add;
    if (new_brk > h->committed) {
        uintptr_t end = fa_align_up(new_brk, FA_LAB_COMMIT_STEP);
        if (end > h->limit)
            end = h->limit;
        if (!_fa_os_commit((void *)h->committed, end - h->committed))
            return false;
        h->committed = end;
    }
    /* Threads freeing into this heap check pointers against the break (relaxed is enough:
     * a block they own was handed to them after the break passed it). */
    fa_atomic_store_relaxed(&h->brk, new_brk);
    FA_HEAP_COUNT(h, heap_bytes, add);
    FA_HEAP_COUNT(h, grows, 1);
    return true;
}

uintptr_t _fa_heap_grow(fa_classic_heap *h, size_t size, bool extend)
{
    if (h->cfg.arena)
        return 0;
    if (extend && h->last_free) {
        uintptr_t last = h->brk - fa_block_prev_size(h->brk);
        size_t have = fa_block_size(last);
        if (have < size) {
            if (!_fa_heap_extend_break(h, size - have))
                return 0;
            fa_heap_index_remove(h, last);
            fa_block_set_size(last, size, false);
            h->last_free = false;
            FA_HEAP_COUNT(h, payload_grown, size - have);
            return last;
        }
    }
    uintptr_t block = h->brk;
    bool prev_free = h->last_free;
    if (!_fa_heap_extend_break(h, size))
        return 0;
    fa_heap_write_header(block, size, false, prev_free);
    h->last_free = false;
    FA_HEAP_COUNT(h, blocks, 1);
    FA_HEAP_COUNT(h, payload_grown, size - FA_BLOCK_HEADER);
    return block;
}

/* A used block of at least `size` bytes (exactly `size` unless the rest is too small to split
 * off), from the index or from growing; 0 when neither works. */
static uintptr_t take_block(fa_classic_heap *h, size_t size)
{
    if (fa_heap_is_buddy(h))
        return _fa_buddy_take(h, size);
    if (fa_heap_is_slab(h))
        return _fa_slab_take(h, size);
    uintptr_t block = h->policy->find(&h->index, size);
    if (!block)
        return _fa_heap_grow(h, size, true);
    fa_heap_take_free(h, block);
    FA_HEAP_COUNT(h, reuses, 1);
    split(h, block, size);
    return block;
}

static void *hand_out(fa_classic_heap *h, uintptr_t block, size_t n)
{
    fa_block_set_word1(block, fa_block_used_check(block));
    size_t usable = fa_block_size(block) - FA_BLOCK_HEADER;
    unsigned k = 63u - (unsigned)__builtin_clzll(fa_block_size(block));
    FA_HEAP_COUNT(h, mallocs, 1);
    FA_HEAP_COUNT(h, requested, n);
    FA_HEAP_COUNT(h, granted, usable);
    FA_HEAP_COUNT(h, class_mallocs[k], 1);
    FA_HEAP_COUNT(h, class_requested[k], n);
    FA_HEAP_COUNT(h, class_granted[k], usable);
    FA_LAB_DEBUG_CHECK(h);
    return fa_block_payload(block);
}

/* ---- pointer validation ---- */

/* The header of a freed block still gives its size, unless a merge has since absorbed it. */
__attribute__((noreturn, cold)) static void double_free(fa_classic_heap *h, const char *caller,
                                                        const void *p)
{
    uintptr_t block = fa_block_of_payload(p);
    size_t size = fa_block_size(block);
    bool plausible = size >= FA_BLOCK_MIN && size <= fa_atomic_load_relaxed(&h->brk) - block;
    _fa_double_free(caller, p, plausible ? size - FA_BLOCK_HEADER : 0);
}

/* The block of a pointer the program hands back, with the reason it is not a live block if
 * it is not: a pointer that was freed before (and whose header still says so) is a double free,
 * anything else an invalid pointer. `remote_ok`: a block freed by another thread and waiting
 * on the remote list counts as live (the owner taking it back). */
static uintptr_t live_block(fa_classic_heap *h, const void *p, const char *caller, bool remote_ok)
{
    uintptr_t block = fa_block_of_payload(p);
    uintptr_t brk = fa_atomic_load_relaxed(&h->brk);
    if (((uintptr_t)p & (FA_BLOCK_ALIGN - 1)) || block < h->start || (uintptr_t)p >= brk)
        _fa_invalid_pointer(caller, p);
    uintptr_t w1 = fa_block_word1(block);
    if (w1 == fa_block_used_check(block) || (remote_ok && w1 == fa_block_remote_check(block))) {
        uintptr_t w0 = fa_block_word0(block);
        size_t size = w0 & ~FA_TAG_FLAGS;
        if ((w0 & FA_TAG_FREE) || size < FA_BLOCK_MIN || size > brk - block)
            _fa_invalid_pointer(caller, p);
        return block;
    }
    if (w1 == fa_block_remote_check(block) || (w1 & ~FA_WORD1_LOW_MASK) == FA_FREE_TAG)
        double_free(h, caller, p);
    _fa_invalid_pointer(caller, p);
}

/* ---- the heap's operations ---- */

/* The block size for n bytes in this heap's layout (0: too large). */
static size_t block_size_for(const fa_classic_heap *h, size_t n)
{
    return fa_heap_is_buddy(h)  ? _fa_buddy_size_for(n)
           : fa_heap_is_slab(h) ? _fa_slab_size_for(n)
                                : fa_block_size_for(n);
}

void *_fa_classic_heap_alloc(fa_classic_heap *h, size_t n)
{
    size_t size = block_size_for(h, n);
    if (!size)
        return NULL;
    uintptr_t block = take_block(h, size);
    return block ? hand_out(h, block, n) : NULL;
}

/* Slab layout: a power-of-two class at least the alignment has its payloads aligned to its
 * size, a run of pages to a page; beyond, a run placed past the break (slab.h). */
static void *slab_alloc_aligned(fa_classic_heap *h, size_t alignment, size_t n)
{
    uintptr_t origin = h->start + FA_BLOCK_HEADER;
    size_t size = _fa_slab_size_for(n), want = fa_block_size_for(n);
    if (!size || alignment > (origin & -origin))
        return NULL;
    if (want < alignment)
        want = alignment;
    uintptr_t block;
    if (want <= FA_SLAB_MAX_CLASS) /* the power of two at or above `want` is a class */
        block = _fa_slab_take(h, (size_t)1 << (64 - __builtin_clzll(want - 1)));
    else if (alignment <= FA_SLAB_PAGE)
        block = _fa_slab_take(h, fa_align_up(want, FA_SLAB_PAGE));
    else
        block = _fa_slab_take_aligned_run(h, fa_align_up(want, FA_SLAB_PAGE), alignment);
    return block ? hand_out(h, block, n) : NULL;
}

void *_fa_classic_heap_alloc_aligned(fa_classic_heap *h, size_t alignment, size_t n)
{
    if (alignment <= FA_BLOCK_ALIGN)
        return _fa_classic_heap_alloc(h, n);
    if (fa_heap_is_buddy(h)) {
        /* A block of at least the alignment has its payload aligned to it, up to the alignment
         * of the heap's origin, start + 16 (buddy.h). */
        uintptr_t origin = h->start + FA_BLOCK_HEADER;
        size_t size = _fa_buddy_size_for(n);
        if (!size || alignment > (origin & -origin))
            return NULL;
        uintptr_t block = _fa_buddy_take(h, size > alignment ? size : alignment);
        return block ? hand_out(h, block, n) : NULL;
    }
    if (fa_heap_is_slab(h))
        return slab_alloc_aligned(h, alignment, n);
    size_t size = fa_block_size_for(n);
    if (!size || alignment > FA_BLOCK_MAX)
        return NULL;
    /* Room for the block, an aligned start and a free block of at least FA_BLOCK_MIN bytes in
     * front of it (the gap before an aligned payload is a multiple of 16 below `alignment`,
     * plus `alignment` when it is too small to be a block). */
    uintptr_t block = take_block(h, size + alignment + FA_BLOCK_MIN);
    if (!block)
        return NULL;
    uintptr_t payload = (uintptr_t)fa_block_payload(block);
    uintptr_t aligned = fa_align_up(payload, alignment);
    if (aligned != payload) {
        while (aligned - payload < FA_BLOCK_MIN)
            aligned += alignment;
        uintptr_t start = fa_block_of_payload((void *)aligned);
        size_t total = fa_block_size(block), gap = start - block;
        fa_block_set_size(block, gap, false);
        fa_heap_write_header(start, total - gap, false, false);
        FA_HEAP_COUNT(h, splits, 1);
        FA_HEAP_COUNT(h, blocks, 1);
        free_block(h, block);
        block = start;
    }
    split(h, block, size);
    return hand_out(h, block, n);
}

void _fa_classic_heap_free(fa_classic_heap *h, void *p, const char *caller)
{
    uintptr_t block = live_block(h, p, caller, false);
    FA_HEAP_COUNT(h, frees, 1);
    free_block(h, block);
    FA_LAB_DEBUG_CHECK(h);
}

size_t _fa_classic_heap_usable(fa_classic_heap *h, const void *p, const char *caller)
{
    return fa_block_size(live_block(h, p, caller, false)) - FA_BLOCK_HEADER;
}

/* Grow a used block to at least `size` bytes without moving it: into a free next block, and
 * past the break when that is the last block. Taking the neighbour is a merge: counted as one,
 * and not done with coalescing off. */
static bool grow_in_place(fa_classic_heap *h, uintptr_t block, size_t size)
{
    size_t have = fa_block_size(block);
    uintptr_t next = block + have;
    if (next == h->brk) {
        if (h->cfg.arena || !_fa_heap_extend_break(h, size - have))
            return false;
        FA_HEAP_COUNT(h, payload_grown, size - have);
        fa_block_set_size(block, size, false);
        return true;
    }
    if (!fa_block_is_free(next) || !h->cfg.coalesce)
        return false;
    size_t next_size = fa_block_size(next), total = have + next_size;
    if (total < size) {
        if (next + next_size != h->brk || h->cfg.arena || !_fa_heap_extend_break(h, size - total))
            return false;
        FA_HEAP_COUNT(h, payload_grown, size - total);
        total = size;
    }
    fa_heap_index_remove(h, next);
    FA_HEAP_COUNT(h, coalesces, 1);
    FA_HEAP_COUNT(h, blocks, -1);
    fa_block_set_size(block, total, false);
    fa_heap_set_prev_free_of(h, block + total, false);
    return true;
}

bool _fa_classic_heap_resize(fa_classic_heap *h, void *p, size_t n)
{
    uintptr_t block = live_block(h, p, "realloc", false);
    size_t size = block_size_for(h, n);
    if (fa_heap_is_slab(h)) /* no splitting: a block is kept whole while it is large enough */
        return size && size <= fa_block_size(block);
    if (fa_heap_is_buddy(h)) {
        /* Shrinking halves the block; growing moves it. An aligned block stays at least
         * its page-aligned size only if the caller asks for that much again (realloc does
         * not promise the alignment). */
        if (!size || size > fa_block_size(block))
            return false;
        _fa_buddy_shrink(h, block, size);
        FA_LAB_DEBUG_CHECK(h);
        return true;
    }
    if (!size || (size > fa_block_size(block) && !grow_in_place(h, block, size)))
        return false;
    split(h, block, size);
    FA_LAB_DEBUG_CHECK(h);
    return true;
}

/* ---- frees from other threads ---- */

void _fa_classic_heap_remote_free(fa_classic_heap *h, void *p, const char *caller)
{
    uintptr_t block = fa_block_of_payload(p);
    uintptr_t brk = fa_atomic_load_relaxed(&h->brk);
    if (((uintptr_t)p & (FA_BLOCK_ALIGN - 1)) || block < h->start || (uintptr_t)p >= brk)
        _fa_invalid_pointer(caller, p);
    /* Claim the block by swapping its check word: of two threads freeing it, one wins and the
     * other sees a double free. Only word 1 is touched; the owner may be rewriting word 0. */
    uintptr_t seen = fa_block_used_check(block);
    if (!fa_atomic_cas_relaxed(fa_block_word(block, 1), &seen, fa_block_remote_check(block))) {
        if (seen == fa_block_remote_check(block) || (seen & ~FA_WORD1_LOW_MASK) == FA_FREE_TAG)
            double_free(h, caller, p);
        _fa_invalid_pointer(caller, p);
    }
    /* Push onto the owner's stack. Release: the owner's acquiring exchange in drain sees the
     * link and the swapped check word. Pops take the whole stack at once, so no ABA. */
    void *head = fa_atomic_load_relaxed(&h->remote);
    do
        *(void **)p = head;
    while (!fa_atomic_cas_weak_release(&h->remote, &head, p));
}

void _fa_classic_heap_drain(fa_classic_heap *h)
{
    if (!fa_atomic_load_relaxed(&h->remote))
        return;
    void *p = fa_atomic_exchange_acquire(&h->remote, NULL);
    while (p) {
        void *next = *(void **)p; /* read before the block becomes a free block */
        uintptr_t block = live_block(h, p, "free", true);
        FA_HEAP_COUNT(h, frees, 1);
        free_block(h, block);
        p = next;
    }
    FA_LAB_DEBUG_CHECK(h);
}

/* ---- statistics helpers ---- */

struct largest {
    size_t size;
};

static void note_largest(uintptr_t block, void *arg)
{
    struct largest *l = arg;
    if (fa_block_size(block) > l->size)
        l->size = fa_block_size(block);
}

size_t _fa_classic_heap_largest_free(fa_classic_heap *h)
{
    struct largest l = {0};
    _fa_index_visit(&h->index, note_largest, &l);
    return l.size ? l.size - FA_BLOCK_HEADER : 0;
}

struct foreach {
    void (*fn)(size_t size, void *arg);
    void *arg;
};

static void call_with_size(uintptr_t block, void *arg)
{
    struct foreach *f = arg;
    f->fn(fa_block_size(block), f->arg);
}

void _fa_classic_heap_foreach_free(fa_classic_heap *h, void (*fn)(size_t size, void *arg),
                                   void *arg)
{
    struct foreach f = {fn, arg};
    _fa_index_visit(&h->index, call_with_size, &f);
}

/* ---- creation ---- */

static size_t exact_lists(const struct fa_classic_heap_config *cfg)
{
    if (!_fa_fit_policy(cfg->policy)->exact_lists)
        return 0;
    size_t max = cfg->exact_max < FA_LAB_EXACT_MAX_LIMIT ? cfg->exact_max : FA_LAB_EXACT_MAX_LIMIT;
    size_t max_block = (max & ~(size_t)(FA_BLOCK_ALIGN - 1)) + FA_BLOCK_HEADER;
    return max_block < FA_BLOCK_MIN ? 0 : (max_block - FA_BLOCK_MIN) / FA_BLOCK_ALIGN + 1;
}

/* The lists some index kinds keep after the heap (TLSF's, the buddy's, the slab's). */
static size_t index_storage(const struct fa_classic_heap_config *cfg)
{
    const struct fa_fit_policy *policy = _fa_fit_policy(cfg->policy);
    return _fa_index_storage_size(_fa_fit_index_kind(policy, cfg->index));
}

static enum fa_index_kind layout_of(const struct fa_classic_heap_config *cfg)
{
    return _fa_fit_policy(cfg->policy)->tree;
}

/* The buddy and slab layouts align payloads from an origin (aligned_origin). */
static bool has_origin(const struct fa_classic_heap_config *cfg)
{
    return layout_of(cfg) == FA_INDEX_BUDDY || layout_of(cfg) == FA_INDEX_SLAB;
}

/* The slab layout's page table: an entry per page the heap can have. */
static size_t slab_pages(const struct fa_classic_heap_config *cfg, size_t reserve)
{
    if (layout_of(cfg) != FA_INDEX_SLAB)
        return 0;
    return (cfg->arena ? cfg->arena : reserve) / FA_SLAB_PAGE;
}

/* With an origin, the metadata is a power of two of pages and 16 bytes larger than its
 * contents, which leaves room for the first header at its end (aligned_origin). */
static size_t metadata_size(const struct fa_classic_heap_config *cfg, size_t reserve)
{
    size_t size = sizeof(fa_classic_heap) + exact_lists(cfg) * sizeof(struct fa_lifo_list) +
                  index_storage(cfg) + slab_pages(cfg, reserve) * sizeof(uint32_t);
    if (!has_origin(cfg))
        return fa_align_up(size, FA_OS_PAGE);
    size = fa_align_up(size + FA_BLOCK_HEADER, FA_OS_PAGE);
    return (size_t)1 << (64 - __builtin_clzll(size - 1));
}

/* The buddy and slab layouts align a payload by its block's place from their origin, the
 * start's payload (start + 16), so the origin is the region's offset with the most alignment
 * that leaves the heap room: the largest power of two past the metadata with the arena after
 * it, or with at least half the reservation (up to 1 GiB), since regions are aligned to it
 * (_fa_classic_heap_create, and a lab's slots to their size). 0 if there is none. */
static size_t aligned_origin(size_t meta, size_t reserve, size_t arena)
{
    if (reserve < meta + arena)
        return 0;
    size_t room = arena ? reserve - arena : reserve / 2;
    if (room < meta)
        return 0;
    size_t origin = (size_t)1 << (63 - __builtin_clzll(room));
    return origin > ((size_t)1 << 30) ? (size_t)1 << 30 : origin;
}

/* The arena rounded down to what the layout tiles: buddy blocks of at least 64 bytes, slab
 * pages, or 16-byte blocks. */
static size_t arena_size(const struct fa_classic_heap_config *cfg)
{
    size_t unit = layout_of(cfg) == FA_INDEX_BUDDY  ? (size_t)1 << FA_BUDDY_MIN_ORDER
                  : layout_of(cfg) == FA_INDEX_SLAB ? FA_SLAB_PAGE
                                                    : FA_BLOCK_ALIGN;
    return cfg->arena & ~(unit - 1);
}

fa_classic_heap *_fa_classic_heap_create_at(void *region, size_t reserve,
                                            const struct fa_classic_heap_config *cfg)
{
    size_t meta = metadata_size(cfg, reserve);
    size_t arena = arena_size(cfg);
    if (cfg->arena && (arena < FA_BLOCK_MIN || arena > FA_BLOCK_MAX))
        return NULL;
    size_t origin = has_origin(cfg) ? aligned_origin(meta, reserve, arena) : meta;
    if (!origin || reserve < origin + (arena ? arena : FA_BLOCK_MIN))
        return NULL;
    /* The metadata, and in arena mode all the memory the heap will ever have, at once. With an
     * origin, the first header sits in the last 16 bytes of the page before it. */
    uintptr_t at = (uintptr_t)region + origin;
    uintptr_t from = origin > meta ? at - FA_OS_PAGE : at;
    if (!_fa_os_commit(region, meta) ||
        (at + arena > from && !_fa_os_commit((void *)from, at + arena - from)))
        return NULL;
    fa_classic_heap *h = region;
    memset(h, 0, sizeof *h);
    h->cfg = *cfg;
    h->cfg.arena = arena;
    h->policy = _fa_fit_policy(cfg->policy);
    h->region = (uintptr_t)region;
    h->reserve = reserve;
    h->start = h->brk = h->committed = at;
    if (has_origin(cfg))
        h->start = h->brk = at - FA_BLOCK_HEADER;
    h->limit = (uintptr_t)region + reserve;
    struct fa_lifo_list *exact = (struct fa_lifo_list *)(h + 1);
    memset(exact, 0, exact_lists(cfg) * sizeof *exact);
    void *storage = index_storage(cfg) ? exact + exact_lists(cfg) : NULL;
    _fa_index_init(&h->index, _fa_fit_index_kind(h->policy, cfg->index), exact, exact_lists(cfg),
                   storage);
    if (layout_of(cfg) == FA_INDEX_SLAB) {
        uint32_t *pages = (uint32_t *)((char *)storage + index_storage(cfg));
        _fa_slab_lists_init(h->index.slab, h->start, pages, slab_pages(cfg, reserve));
    }
    if (arena && has_origin(cfg)) {
        h->committed = h->limit = h->brk = h->start + arena;
        FA_HEAP_COUNT(h, heap_bytes, arena);
        if (layout_of(cfg) == FA_INDEX_BUDDY)
            _fa_buddy_fill(h, h->start, h->brk, false);
        else
            _fa_slab_arena(h);
    } else if (arena) {
        /* One free block spans the arena; the break sits at its end for good. */
        h->committed = h->limit = h->start + arena;
        fa_heap_write_header(h->start, arena, false, false);
        h->brk = h->limit;
        FA_HEAP_COUNT(h, heap_bytes, arena);
        FA_HEAP_COUNT(h, blocks, 1);
        FA_HEAP_COUNT(h, payload_grown, arena - FA_BLOCK_HEADER);
        free_block(h, h->start);
    }
    return h;
}

fa_classic_heap *_fa_classic_heap_create(const struct fa_classic_heap_config *cfg, size_t reserve)
{
    if (cfg->arena)
        reserve = metadata_size(cfg, 0) + fa_align_up(cfg->arena, FA_OS_PAGE);
    reserve = fa_align_up(reserve, FA_OS_PAGE);
    size_t align = FA_OS_PAGE;
    if (has_origin(cfg)) {
        align = aligned_origin(metadata_size(cfg, reserve), reserve, arena_size(cfg));
        if (!align)
            return NULL;
    }
    void *region = _fa_os_reserve(reserve, align);
    if (!region)
        return NULL;
    fa_classic_heap *h = _fa_classic_heap_create_at(region, reserve, cfg);
    if (!h)
        _fa_os_unmap(region, reserve);
    return h;
}

void _fa_classic_heap_destroy(fa_classic_heap *h)
{
    if (h)
        _fa_os_unmap((void *)h->region, h->reserve);
}

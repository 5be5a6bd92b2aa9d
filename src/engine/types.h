/* Data of the fast engine: constants, segments, pages, heaps. No code here.
 *
 *   segment (4 MiB, aligned to 4 MiB)             pointer -> segment: p & ~(4 MiB - 1)
 *   +--------+--------+--------+-- ... --+        pointer -> page:    pages[(p - seg) >> page_shift]
 *   | header | page 0 | page 1 |         |
 *   +--------+--------+--------+-- ... --+
 *   small segments: 64 pages of 64 KiB (blocks up to 8 KiB); page 0 starts at 32 KiB
 *   medium segments: 8 pages of 512 KiB (blocks up to 128 KiB); page 0 starts at 128 KiB
 *   big segments: 2 pages of 2 MiB (blocks up to 512 KiB); page 0 starts at 64 KiB
 *   large blocks: one mapping each, header at the 4 MiB-aligned start, the block right after it
 *
 * Small and medium page 0 starts at an offset that is a multiple of the largest block size of
 * its kind, so every block of a power-of-two size class is aligned to its size (aligned
 * allocation relies on it, and stops at the medium classes).
 */
#ifndef FA_TYPES_H
#define FA_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/arch.h"

#define FA_SEG_SHIFT 22
#define FA_SEG_SIZE ((size_t)1 << FA_SEG_SHIFT)
#define FA_SEG_MASK (FA_SEG_SIZE - 1)

/* Three kinds of segments carve their pages for the size classes: small (64 KiB pages), medium
 * (512 KiB) and big (2 MiB). Above FA_CLASS_MAX a block is large: a mapping of its own. */
#define FA_SMALL_PAGE_SHIFT 16
#define FA_MEDIUM_PAGE_SHIFT 19
#define FA_BIG_PAGE_SHIFT 21
#define FA_SMALL_FIRST_PAGE ((size_t)32 << 10)
#define FA_MEDIUM_FIRST_PAGE ((size_t)128 << 10)
#define FA_BIG_FIRST_PAGE ((size_t)64 << 10)
#define FA_SMALL_MAX ((size_t)8 << 10)
#define FA_MEDIUM_MAX ((size_t)128 << 10)
#define FA_CLASS_MAX ((size_t)512 << 10)
#define FA_MAX_PAGES (FA_SEG_SIZE >> FA_SMALL_PAGE_SHIFT)

/* Size classes: 16-byte steps up to 128, then 8 classes per doubling up to FA_MEDIUM_MAX, then
 * 4 per doubling up to FA_CLASS_MAX (size_class.h). */
#define FA_ALIGN 16
#define FA_BINS 96
#define FA_SMALL_BINS 56  /* bins 0..55 hold blocks of at most FA_SMALL_MAX bytes */
#define FA_MEDIUM_BINS 88 /* bins 56..87 medium blocks, 88..95 big ones */
#define FA_DIRECT_MAX 1024
#define FA_DIRECT_SLOTS (FA_DIRECT_MAX + 1)

/* One word per 4 MiB chunk maps the whole user address space (arch.h: 47 or 48 bits); the map
 * is untouched, and so costs no memory, where no segment is. */
#define FA_SEGMAP_SIZE ((size_t)1 << (FA_ADDRESS_BITS - FA_SEG_SHIFT))
typedef uintptr_t fa_map_entry_t;
enum fa_map_entry {
    FA_MAP_NONE = 0,     /* not fitalloc's */
    FA_MAP_INTERIOR = 1, /* inside a large block aligned beyond 2 MiB: header is further back */
};
/* Any other entry: a segment header starts at this chunk (fa_map_entry_of). */
#define fa_map_is_segment(entry) ((entry) > FA_MAP_INTERIOR)

/* A segment's 64 KiB pieces (its smallest pages): each has a word in the segment's page index. */
#define FA_SEG_PIECES (FA_SEG_SIZE >> FA_SMALL_PAGE_SHIFT)

enum fa_segment_kind { FA_SEG_SMALL, FA_SEG_MEDIUM, FA_SEG_BIG, FA_SEG_LARGE, FA_SEG_KINDS };

/* The kind of segment whose pages serve a size class. */
static inline int fa_bin_kind(size_t bin)
{
    return bin < FA_SMALL_BINS ? FA_SEG_SMALL : bin < FA_MEDIUM_BINS ? FA_SEG_MEDIUM : FA_SEG_BIG;
}

/* Page life cycle, changed only with compare-and-swap because the purger races the owner. */
enum fa_page_state {
    FA_PAGE_CLEAN = 0, /* free, never touched or purged: reads as zero, costs no memory */
    FA_PAGE_DIRTY,     /* free, may hold memory: the purger will madvise it after the delay */
    FA_PAGE_PURGING,   /* the purger is handing it back to the OS right now */
    FA_PAGE_USED,      /* serves a size class for a heap */
};

#define FA_OWNER_FULL ((uintptr_t)1)
/* Set in the owner word of a slow page (secure mode, tracing), so that the free paths of
 * other threads take the checked way too; the page's thread word stays 0, so the free fast
 * path hands its own thread's blocks to the slow path. */
#define FA_OWNER_SLOW ((uintptr_t)2)

/* A free block's first two words (every block has at least 16 bytes): the link to the next
 * free block, stored encoded (free_list.h), and the mark saying the block is free. */
typedef struct fa_block_s {
    uintptr_t link;
    uintptr_t mark;
} fa_block_t;

/* The end of every free list, local or remote: not NULL but an address above any user address,
 * so that the malloc fast path tells the end of its list and a link the program overwrote
 * (which decodes to a non-canonical address) from a block with one comparison (free_list.h). */
#define FA_LIST_END ((fa_block_t *)UINTPTR_MAX)

struct fa_heap_s;

/* One page: blocks of one size class. 256 bytes; three cache lines used, by who writes them:
 *   line 0, read-mostly: what every free reads (owner word, geometry), changed rarely;
 *   line 1, the owner's: what malloc and a local free write every time;
 *   line 2, other threads': the remote free list and the notify link.
 * So a thread freeing into another thread's page reads a line the owner does not keep
 * writing, and writes a line the owner only takes when it collects. Owner-only fields are
 * plain; the others are accessed atomically (platform/atomic.h).
 *
 * Invariants of a page in use (state == FA_PAGE_USED; check.c verifies them in debug builds):
 *   fa_owner_heap(owner) == the heap whose queue or full list holds it (0 while abandoned,
 *     detached or in the page pool; a parked heap keeps its pages); that heap owns the page's
 *     segment unless the page is a migrant
 *   capacity <= reserved;  len(local) + count <= capacity, and len(free) <= count, where
 *     count = fa_page_count(page) = used + sparse_at + full_offset - pinned counts live blocks, blocks
 *     freed remotely, in xfree, not collected yet, and the blocks on free
 *   count == 0  =>  pinned == 1  (a queued page with no live block and nothing on free is its
 *                                 queue's head; any other is released when its last block is
 *                                 freed)
 *   sparse_at != 0  =>  the page is in its class's queue, not at its head, and count > sparse_at
 *   mesh != NULL  =>  detached (mesh.h): owner == FA_OWNER_SLOW, thread == 0, free == local ==
 *                     FA_LIST_END, on no queue; the mesher's alone
 *   on the full list  =>  free == FA_LIST_END && pinned == 0 && sparse_at == 0 &&
 *                         (owner & FA_OWNER_FULL), and local == FA_LIST_END unless its thread
 *                         word is set (the owner's frees then gather there, up to the trigger)
 *   full_offset != 0  =>  on the full list
 *   only a heap's own pages hold blocks on free: an abandoned page's go to local
 *   every block b of free, local or xfree: fa_page_has_block(page, b) and
 *     b->mark == fa_page_mark(page)
 *   fa_xfree_count(xfree) == the number of blocks on the stack fa_xfree_head(xfree) starts
 *   p is a block  <=>  (p - start) * magic < limit  (wrapping arithmetic: free_list.h) */
typedef struct fa_page_s {
    /* line 0: read-mostly */
    /* The owner heap's address, with FA_OWNER_FULL set while the page is on the owner's full
     * list; 0 while abandoned. The slow free path compares it with the thread's heap; the
     * fast path compares `thread`, which is 0 on a full page, so a full page sends its frees
     * to the slow path, which moves it back to its queue. */
    uintptr_t owner;
    /* The thread pointer of the thread whose frees into it the fast path takes as local ones,
     * or 0 (fa_page_set_thread). */
    uintptr_t thread;
    uintptr_t start; /* address of block 0 */
    /* p starts one of the first `capacity` blocks iff (p - start) * magic < limit (wrapping
     * 64-bit arithmetic): free_list.h says why. */
    uint64_t magic;
    uint64_t limit;
    uint32_t block_size;
    uint16_t capacity; /* blocks provisioned so far (the free list is built lazily) */
    uint16_t reserved; /* blocks that fit in the page */
    uint8_t bin;
    uint8_t by_mode; /* set up by a mode with pages of its own (mode_pages.h: secure mode's) */
    /* Every malloc and free of its blocks takes the slow path (a mode's page, FITALLOC_TRACE):
     * never in a direct slot, FA_OWNER_SLOW in its owner word. */
    uint8_t slow;
    /* Taken CLEAN: its memory past `capacity` reads as zero until a block is provisioned there,
     * which _fa_page_extend checks (a write running past the last block handed out). */
    uint8_t fresh;
    /* Set when the page went to the page pool (page_pool.c): from then until it goes back to
     * its segment, the heap holding it may not own that segment, so the segment's adopter and
     * the purger's pass over abandoned segments leave it alone. Written only by the heap
     * holding the page when it pools it, and when a segment's owner takes the page free. */
    uint8_t migrant;
    /* On one of the page pool's lists (page_pool.c); read and written under _fa_global_lock. */
    uint8_t pooled;
    /* Holds a block the heap profiler sampled (profile_pages.c): its frees take the slow path,
     * which tells the profiler, as a slow page's do (FA_OWNER_SLOW, thread word 0). Set and
     * cleared by the owner. */
    uint8_t prof_slow;
    /* Every block on `free` was provisioned in memory that reads as zero (a page taken CLEAN,
     * past its capacity), and none has been handed out: zero but for its link word, so calloc
     * does not clear it. Set by _fa_page_extend, cleared when `local` becomes `free`. */
    uint8_t free_zero;
    /* enum fa_page_state (the purger changes it while the page is free), alone in its word: the
     * compiler reads the flags above in one load, which must not take in a byte another thread
     * writes. */
    uint8_t state;
    uint8_t pad0[7];
    /* line 1: the owner's */
    /* Two free lists, so that only free updates a counter: when malloc counted too, in the
     * same word, each malloc waited for the previous free's store to it, and the other way
     * round (docs/design.md, "Pages and free lists"). */
    fa_block_t *free;  /* malloc pops; when it runs out, `local` takes its place */
    fa_block_t *local; /* the owner's frees push */
    uint64_t placed;   /* blocks put on `free` since the page was set up (handed out or not) */
    /* The live blocks (remote frees not collected yet among them) and the blocks on `free`,
     * plus 1 while this page is its queue's head ("pinned"). free decrements it; malloc does
     * not touch it (a block popped from `free` stays counted, as live now). */
    uint16_t used;
    uint16_t listed;      /* blocks provisioned, but for one held back (page.c: _fa_page_extend) */
    uint8_t pinned;       /* 1 while the head of its queue: `used` then carries a +1 */
    uint8_t mesh_returns; /* times the mesher gave it back to a heap since it was set up */
    /* With meshing on, a page in its queue but not at its head carries -sparse_at in `used`,
     * so that the local free that leaves it with sparse_at blocks takes `used` to 0 and the
     * free fast path's one test hands it to the owner's slow path, which gives the page to the
     * mesher (heap.c, mesh_page.c). 0: no such trigger. */
    uint16_t sparse_at;
    uint64_t xcollected;    /* remote frees the owner collected (statistics: see stats.c) */
    struct fa_page_s *next; /* the heap's queue for this size class, or its full list */
    struct fa_page_s *prev;
    /* Which of its heap's sparse candidates (fa_sparse_candidate_t) it is, while it is one;
     * never 0 then, and 0 from setup. */
    uint32_t sparse_seen;
    /* A page on its owner's full list carries -full_offset in `used` (heap.c: move_to_full),
     * so that the owner's frees that leave it with a few blocks to hand out take `used` to 0
     * and the free fast path's one test hands it back to the slow path, which returns it to
     * its queue; one block at a time, a fragmented heap's pages came back to be taken at the
     * next malloc and go full again (docs/design.md, "Full pages come back with a 16th of their
     * blocks free"). 0: no offset. */
    uint16_t full_offset;
    /* How far from `start` blocks have been provisioned since the page was last taken clean,
     * in OS pages: its memory before that is likely resident (the purger may have taken it). */
    uint16_t touched;
    /* line 2: written by other threads */
    /* Blocks freed by other threads: a lock-free stack, its head's address in the low bits and
     * the number of blocks on it from FA_XFREE_COUNT_SHIFT up (free_list.h), so that the
     * owner takes the whole stack and its count in one exchange, without walking it. */
    uintptr_t xfree;
    struct fa_page_s *notify_next; /* link in the owner's list of full pages with remote frees */
    /* While DIRTY: when the purger may hand it back (ms); while emptied in the page pool: when
     * the pool's sweep gives it back to its segment. */
    uint64_t purge_at;
    uint8_t notified; /* already on the owner's notify list */
    uint8_t pad3a;
    /* While on a page pool's class list: the blocks its `used` counted when the pool last
     * looked (under the lock), else 0. A remote free that takes the xfree count up to it may
     * have emptied the page (page_pool.c: _fa_page_pool_freed). */
    uint16_t pool_live;
    uint16_t prof_sampled; /* live blocks the heap profiler sampled (atomic: any thread frees) */
    uint8_t pad3[34];
    /* line 3: a page given to the mesher (detached): its record (mesh.h), else NULL */
    struct fa_mesh_page_s *mesh;
    /* The heap profiler: `placed` when the blocks on `free` were last counted (profile_pages.c). */
    uint64_t prof_placed;
    /* The heap profiler's sampled blocks as a filter of 256 bits (engine.h:
     * fa_page_maybe_sampled): a free whose bit is clear is no sample's, and skips the checked
     * path. Set by the owner, cleared when no sampled block is left; read by any thread. */
    uint64_t prof_filter[4];
    /* The heap profiler's sample point lies in this page's next list: the first malloc that
     * finds `free` empty is the sample (profile_pages.c). */
    uint8_t prof_armed;
    uint8_t pad4[15]; /* so that a descriptor's index is a shift (256 bytes) */
} fa_page_t;

_Static_assert(((size_t)1 << FA_SMALL_PAGE_SHIFT) / FA_ALIGN + 1 < ((size_t)1 << 16),
               "a page's blocks and its pin fit in 16 bits");
/* The live blocks (remote frees not collected yet among them) and the blocks on `free`: `used`
 * without the pin and the sparse trigger. */
static inline uint16_t fa_page_count(const fa_page_t *page)
{
    return (uint16_t)(page->used + page->sparse_at + page->full_offset - page->pinned);
}

/* The blocks freed into a page since it was set up (local frees and collected remote ones):
 * those put on `free` are handed out but for those still there, which `used` counts too. */
static inline uint64_t fa_page_frees(const fa_page_t *page)
{
    return page->placed - (uint64_t)fa_page_count(page);
}

/* A segment: its header, its page descriptors, its pages. Invariants:
 *   (uintptr_t)seg % FA_SEG_SIZE == 0;  _fa_segmap[seg >> FA_SEG_SHIFT] == fa_map_entry_of(seg)
 *   fa_segment_index(seg)[i] == &pages[i >> (page_shift - FA_SMALL_PAGE_SHIFT)]
 *   used_pages == the number of pages[i] with state == FA_PAGE_USED
 *   heap != NULL  <=>  it is on heap->segments[kind] (and every used page's owner is heap, but
 *     for migrants: page_pool.c) */
typedef struct fa_segment_s {
    uint8_t kind;       /* enum fa_segment_kind */
    uint8_t page_shift; /* page index = (p - segment) >> page_shift */
    uint16_t page_count;
    uint16_t used_pages;
    /* Set up by a mode with pages of its own (mode_pages.h): secure mode's large block mapping
     * (canary, guard pages, never cached), a segment's pages (guard pages: secure_guard.c). */
    uint8_t by_mode;
    uint8_t watched;           /* large: its resident pages are counted at its free */
    uint8_t index_colour;      /* below FA_SEG_INDEX_COLOURS: where its page index lies (below) */
    struct fa_heap_s *heap;    /* owner, NULL when abandoned or cached */
    struct fa_segment_s *next; /* owner's list, the abandoned list or the cache */
    struct fa_segment_s *prev;
    struct fa_segment_s *all_next; /* registry of small and medium segments (for the purger) */
    struct fa_segment_s *all_prev;
    size_t mapped;         /* bytes mapped at this address */
    uint64_t cached_at;    /* ms, while in a cache */
    uintptr_t large_block; /* large: the block's address (0: freed, kept by its thread) */
    size_t large_usable;   /* large: bytes usable from large_block to the mapping's end */
    size_t large_slack;    /* large: bytes mapped beyond the request (a bigger mapping reused) */
    uintptr_t large_prev;  /* large: the block freed in this mapping before large_block (or 0) */
    /* small, medium, big: from this offset to the segment's end no page has handed out memory
     * yet, and it is inaccessible (segment.c: _fa_segment_open) */
    size_t opened;
    /* A large block's page index: the page descriptor of each 64 KiB piece, for the free fast
     * path (fa_map_page). The other kinds keep theirs elsewhere (fa_segment_index). */
    fa_page_t *page_of[FA_SEG_PIECES];
    /* page_count entries (one for a large block), each starting a cache line */
    fa_page_t pages[] __attribute__((aligned(64)));
} fa_segment_t;

/* Small, medium and big segments keep their page index right after their page descriptors,
 * at one of FA_SEG_INDEX_COLOURS places 512 bytes (its size) apart, taken in turn as segments
 * are mapped (by order, not by address, so that a replay lays its heap out the same way every
 * time). At one offset in every 4 MiB-aligned segment, the indexes of all segments fell into
 * the same 8 sets of the L1 and L2 caches, which hold 8 lines a set: a program whose frees and
 * malloc_usable_size calls spread over 30 segments (Redis evicting keys) missed there on most
 * of them, for 15 KiB of indexes. Eight places tile the 64 sets of a 32 KiB L1. */
#define FA_SEG_INDEX_COLOURS 8
#define FA_SEG_INDEX_SIZE (FA_SEG_PIECES * sizeof(fa_page_t *))
/* The end of the farthest index: the part of a segment header that stays open. */
#define FA_SEG_INDEX_END_MAX                                                                       \
    (sizeof(fa_segment_t) + FA_MAX_PAGES * sizeof(fa_page_t) +                                     \
     FA_SEG_INDEX_COLOURS * FA_SEG_INDEX_SIZE)

static inline size_t fa_segment_index_offset(const fa_segment_t *seg)
{
    return sizeof(fa_segment_t) + (size_t)seg->page_count * sizeof(fa_page_t) +
           (size_t)seg->index_colour * FA_SEG_INDEX_SIZE;
}

static inline fa_page_t **fa_segment_index(fa_segment_t *seg)
{
    if (seg->kind == FA_SEG_LARGE)
        return seg->page_of;
    return (fa_page_t **)((uintptr_t)seg + fa_segment_index_offset(seg));
}

/* A segment's map entry: the address of its page index, less the index's offset that the free
 * fast path adds, so that one load finds the page descriptor of a pointer p in the segment:
 * entry + (p >> 16) * 8 = page_of + ((p - seg) >> 16) * 8, as seg is 4 MiB-aligned. Three
 * instructions less than taking the segment, the offset and the page shift apart; and the sum
 * never wraps, since a segment's index lies above seg / 8192. */
static inline fa_map_entry_t fa_map_entry_of(fa_segment_t *seg)
{
    return (uintptr_t)fa_segment_index(seg) -
           ((uintptr_t)seg >> FA_SMALL_PAGE_SHIFT) * sizeof(fa_page_t *);
}

static inline fa_page_t *fa_map_page(fa_map_entry_t entry, uintptr_t p)
{
    return *(fa_page_t *const *)(entry + (p >> FA_SMALL_PAGE_SHIFT) * sizeof(fa_page_t *));
}

typedef struct fa_page_queue_s {
    fa_page_t *head;
    fa_page_t *tail;
} fa_page_queue_t;

/* Put page into q's doubly linked list after `after` (NULL: at the head). */
static inline void fa_page_queue_insert(fa_page_queue_t *q, fa_page_t *after, fa_page_t *page)
{
    page->prev = after;
    page->next = after ? after->next : q->head;
    if (page->next)
        page->next->prev = page;
    else
        q->tail = page;
    if (after)
        after->next = page;
    else
        q->head = page;
}
static inline void fa_page_queue_push_back(fa_page_queue_t *q, fa_page_t *page)
{
    fa_page_queue_insert(q, q->tail, page);
}
static inline void fa_page_queue_push_front(fa_page_queue_t *q, fa_page_t *page)
{
    fa_page_queue_insert(q, NULL, page);
}

/* Take page out of q's doubly linked list. */
static inline void fa_page_queue_unlink(fa_page_queue_t *q, fa_page_t *page)
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
}

/* A page whose sparse trigger fired, waiting before it goes to the mesher (heap.c): which
 * candidacy (the page's sparse_seen then), and since when (ms, wrapping). */
#define FA_SPARSE_CANDIDATES 16
typedef struct fa_sparse_candidate_s {
    struct fa_page_s *page;
    uint32_t seen;
    uint32_t since_ms;
} fa_sparse_candidate_t;

/* A thread's heap. Only its thread touches it, except `notified_pages` (atomic stack). */
typedef struct fa_heap_s {
    /* n -> the page that serves n bytes, one slot per byte count rather than per class, so
     * that malloc indexes it with n itself (no rounding: two instructions less); 8 KiB. A
     * class's slots name its queue's head, the empty page, or while the class borrows
     * (heap.c), the head of the power-of-two class above it. */
    fa_page_t *direct[FA_DIRECT_SLOTS];
    /* bin -> its queue's head as the direct slots hold it (the empty page when there is none
     * or it is slow): malloc pops from it for the sizes above FA_DIRECT_MAX. */
    fa_page_t *bin_page[FA_BINS];
    fa_page_queue_t queues[FA_BINS];      /* pages with free blocks, head first */
    fa_page_queue_t full;                 /* pages with no free block */
    fa_page_t *notified_pages;            /* full pages that received remote frees */
    fa_segment_t *segments[FA_SEG_LARGE]; /* owned small, medium and big segments */
    uintptr_t thread; /* the thread pointer of the thread using it (0: none, or past its end) */
    struct fa_heap_s *pool_next;    /* the free or the parked list */
    struct fa_heap_s *all_next;     /* every heap structure ever made (for statistics) */
    uint64_t remote_frees[FA_BINS]; /* frees this thread made into other threads' pages */
    uint64_t next_purge;            /* ms: when this thread runs an inline purge pass */
    /* The ring of sparse candidates below: its oldest entry, its length, the candidacies so
     * far; then the slow path's tick. Here, beside the other fields a new heap sets and every
     * slow path writes: a heap that never looks for idle heads or sparse pages then writes no
     * page of the arrays below. */
    uint32_t sparse_first, sparse_count, sparse_seen;
    uint32_t idle_ticks;      /* slow-path calls (heap.c: maybe_release_idle_heads) */
    uint32_t idle_ticks_seen; /* idle_ticks at the last look for idle heads */
    /* Per small class, enum fa_borrow (heap.c): whether its mallocs are served, for now, from
     * the head page of the power-of-two class above it. Beside the fields a new heap sets. */
    uint8_t borrow[FA_SMALL_BINS];
    /* Each queue's head and its `placed` at the last look for idle heads (heap.c), when the
     * next look is due (ms), and the slow-path calls counted towards the next clock reading. */
    fa_page_t *idle_head[FA_BINS];
    uint64_t idle_placed[FA_BINS];
    fa_block_t *idle_free[FA_BINS]; /* the head's `free` then: a class nothing was taken from */
    uint64_t next_idle_check;
    /* Pages whose sparse trigger fired, oldest first from sparse_first (a ring); the number
     * of candidacies so far names each. */
    fa_sparse_candidate_t sparse[FA_SPARSE_CANDIDATES];
    uint64_t parked_at; /* ms: when its thread ended (on the parked list) */
    /* The large block this heap's thread freed last, kept mapped for its next large malloc
     * (large.c); atomic: the purger takes it once it has waited the purge delay. */
    struct fa_segment_s *large_hot;
    uint64_t large_hot_reuses; /* mallocs served from large_hot (each after a free into it) */
    struct fa_quarantine *quarantine; /* secure mode: blocks freed but not yet reusable */
} fa_heap_t;

_Static_assert(sizeof(fa_page_t) == 256, "page descriptors are 256 bytes (index by shift)");
_Static_assert(offsetof(fa_segment_t, pages) % 64 == 0, "descriptors start cache lines");
_Static_assert(offsetof(fa_page_t, free) == 64, "owner fields start the second cache line");
_Static_assert(offsetof(fa_page_t, xfree) == 128, "remote fields start the third cache line");
_Static_assert(sizeof(fa_segment_t) % 64 == 0, "page indexes start cache lines");
_Static_assert(FA_SEG_INDEX_END_MAX + 4096 <= FA_SMALL_FIRST_PAGE,
               "small segment header and index fit before page 0 (and secure mode's guard page)");
_Static_assert(FA_SMALL_FIRST_PAGE % FA_SMALL_MAX == 0, "page 0 aligned for every small class");
_Static_assert(FA_MEDIUM_FIRST_PAGE % FA_MEDIUM_MAX == 0, "page 0 aligned for every medium class");
/* Big blocks are only 16-byte aligned: aligned requests stop at the medium classes. */
_Static_assert(sizeof(fa_segment_t) + sizeof(fa_page_t) <= FA_BIG_FIRST_PAGE,
               "big segment header fits before its page");
_Static_assert((FA_MAX_PAGES >> 0) <= 64, "at most 64 pages per segment");

#endif /* FA_TYPES_H */

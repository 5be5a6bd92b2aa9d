/* Prototypes shared between the engine's files, grouped by the file that defines them, with
 * what the engine uses of the layers below it. Names starting with _fa_ are internal (hidden by
 * -fvisibility=hidden). */
#ifndef FA_ENGINE_H
#define FA_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/assert.h"
#include "common/message.h"
#include "common/mode.h"
#include "common/process.h"
#include "engine/types.h"
#include "platform/compiler.h"
#include "platform/mutex.h"
#include "platform/os.h"
#include "trace/record.h"
#include "platform/atomic.h"

/* The owner word a heap gives its page, and the heap an owner word names. */
static inline uintptr_t fa_owner_word(const struct fa_heap_s *heap, const fa_page_t *page)
{
    return (uintptr_t)heap | (page->slow || page->prof_slow ? FA_OWNER_SLOW : 0);
}
static inline struct fa_heap_s *fa_owner_heap(uintptr_t word)
{
    return (struct fa_heap_s *)(word & ~(FA_OWNER_FULL | FA_OWNER_SLOW));
}

/* page.c: guard.c keeps no more big blocks inaccessible (its budget is spent, it set this). */
extern bool _fa_guard_spent;

/* Whether the free fast path hands even the owner's frees of the page's blocks to the slow
 * path: a slow page's (secure mode, tracing), one holding a block the profiler sampled, and a
 * big page's while guard.c may keep its blocks inaccessible. */
static inline bool fa_page_frees_slowly(const fa_page_t *page)
{
    return page->slow || page->prof_slow ||
           (page->bin >= FA_MEDIUM_BINS && !fa_atomic_load_relaxed(&_fa_guard_spent));
}

/* The bit of the block at p in its page's filter of sampled blocks (types.h: prof_filter): its
 * offset in units of the largest power of two not above the block size, so that the blocks of
 * a page of 256 blocks or fewer have a bit each. */
static inline unsigned fa_page_filter_bit(const fa_page_t *page, const void *p)
{
    unsigned shift = 63 - (unsigned)__builtin_clzll(page->block_size);
    return (unsigned)(((uintptr_t)p - page->start) >> shift) & 255;
}
static inline void fa_page_filter_clear(fa_page_t *page)
{
    for (size_t i = 0; i < sizeof page->prof_filter / sizeof page->prof_filter[0]; i++)
        fa_atomic_store_relaxed(&page->prof_filter[i], 0);
}
static inline bool fa_page_maybe_sampled(const fa_page_t *page, const void *p)
{
    unsigned bit = fa_page_filter_bit(page, p);
    return fa_atomic_load_relaxed(&page->prof_filter[bit / 64]) >> (bit % 64) & 1;
}

/* A page's thread word, which the free fast path compares with its own thread pointer (one
 * instruction, where reading the heap pointer, a TLS variable, takes two): the pointer of the
 * thread using the heap that owns the page while the page is on one of that heap's queues, or
 * on its full list counting down to its return (heap.c: move_to_full), and not slow; else 0.
 * So a match means: our page, not slow, and a free that only pushes onto `local` and counts
 * `used` down (a full page's return comes when `used` reaches 0).
 * Only the heap's thread sets a word to its pointer, and it clears them all when it stops using
 * the heap (heap.c), before the C library can hand its pointer to a new thread. */
static inline void fa_page_set_thread(fa_page_t *page, uintptr_t thread)
{
    fa_atomic_store_relaxed(&page->thread, fa_page_frees_slowly(page) ? 0 : thread);
}

/* A list of segments through their next and prev (its owner guards it). */
static inline void fa_segment_list_push(fa_segment_t **list, fa_segment_t *seg)
{
    seg->prev = NULL;
    seg->next = *list;
    if (*list)
        (*list)->prev = seg;
    *list = seg;
}
static inline void fa_segment_list_remove(fa_segment_t **list, fa_segment_t *seg)
{
    if (seg->prev)
        seg->prev->next = seg->next;
    else
        *list = seg->next;
    if (seg->next)
        seg->next->prev = seg->prev;
    seg->next = seg->prev = NULL;
}

/* segment.c */
extern fa_map_entry_t _fa_segmap[FA_SEGMAP_SIZE];
extern fa_mutex_t _fa_global_lock; /* registry, caches, abandoned list, heap pool */
/* Map seg (its page index filled first) in its first chunk, and the next chunks - 1 as interior
 * to it; or unmap `chunks` chunks from seg on. */
void _fa_segmap_add(fa_segment_t *seg, size_t chunks);
void _fa_segmap_remove(const fa_segment_t *seg, size_t chunks);
/* A free page in state `want` (FA_PAGE_DIRTY or FA_PAGE_CLEAN) of the heap's own segments of
 * class bin's kind, or of a new one, for the heap to set up (page.c); NULL if none. */
fa_page_t *_fa_segment_take_page(fa_heap_t *heap, size_t bin, uint8_t want);
/* A free page not purged yet, for the heap to set up: of its own segments, else of a cached
 * segment, which becomes the heap's; NULL if none. */
fa_page_t *_fa_segment_dirty_page(fa_heap_t *heap, size_t bin);
fa_page_t *_fa_segment_new_page(fa_heap_t *heap, size_t bin); /* from the cache or the OS */
void _fa_segment_release_page(fa_page_t *page);
/* What releasing a page does but for handing it to its segment: counters folded, lists and
 * owner cleared, no block of it valid (the page pool keeps such pages: page_pool.c). */
void _fa_segment_empty_page(fa_page_t *page);
/* In a fork child, where the other threads are gone and a new thread may get one of their
 * thread pointers: clear the thread word of every page but the calling thread's. */
void _fa_segments_fork_child(void);
void _fa_segment_release(fa_segment_t *seg);
fa_segment_t *_fa_segment_pop_abandoned(int kind); /* FA_SEG_SMALL, _MEDIUM or _BIG */
void _fa_segment_abandon(fa_segment_t *seg);
void _fa_segments_purge(uint64_t now, bool force, long *next);
/* fn for every page in use of the small and medium segments, under _fa_global_lock. */
void _fa_pages_foreach(void (*fn)(const fa_page_t *page, void *arg), void *arg);
fa_segment_t *_fa_segment_of_block(const void *p, fa_page_t **page_out);
/* The large block's segment whose mapping holds address p, by the segment map; NULL if none. */
fa_segment_t *_fa_large_header(uintptr_t p);
size_t _fa_segment_first_offset(int kind);
/* Make seg's memory up to `end` bytes from its start accessible, before a page provisions blocks
 * there; false if the OS has no memory for it. */
bool _fa_segment_open(fa_segment_t *seg, size_t end);

/* thread_heap.c: the calling thread's heap, or the empty one that stands in */
extern __thread fa_heap_t *_fa_heap_tls __attribute__((tls_model("initial-exec")));
extern fa_heap_t _fa_heap_empty;
extern fa_page_t _fa_page_empty;

/* page.c: free lists are built at most this many bytes (and so blocks) at a time */
#define FA_EXTEND_BYTES 4096
#define FA_EXTEND_MAX_BLOCKS (FA_EXTEND_BYTES / FA_ALIGN)
/* Every page set up from now on, and every page a heap adopts, is slow (types.h): set by
 * process/ when calls are traced. */
extern bool _fa_pages_slow;
void _fa_page_init(fa_page_t *page, fa_heap_t *heap, size_t bin);
/* Take the blocks other threads freed into the page (onto `local`). */
void _fa_page_collect(fa_page_t *page);
/* Give malloc blocks to pop (`free`) if the page has freed ones: whether it has now. */
bool _fa_page_refill(fa_page_t *page);
bool _fa_page_extend(fa_page_t *page);
/* Before a page leaves its owner: the blocks on `free` join `local`, so that `used` counts live
 * blocks only and the page is released once they are all freed. */
void _fa_page_give_up_free(fa_page_t *page);
uint64_t _fa_block_magic(uint64_t block_size); /* for fa_page_has_block (free_list.h) */

/* The free blocks a page without any must have again before it serves mallocs (from its
 * owner's full list, or from the page pool): a 16th of the page, at least one and at most
 * FA_FULL_RETURN_MAX. Coming back with one, in a heap whose frees are spread over many pages
 * (Redis evicting keys at random), a page served one malloc and went full again: a slow malloc,
 * a slow free and two moves per block. The blocks a full page gathers short of the point wait
 * there, unused: at most a 16th of its memory, and no more than 15 blocks (a 16th of a page of
 * 16-byte blocks, 256 of them, cost peak RSS: docs/design.md, "Full pages come back with a 16th
 * of their blocks free"). */
#define FA_FULL_RETURN_SHIFT 4
#define FA_FULL_RETURN_MAX 16
static inline uint16_t fa_page_return_blocks(const fa_page_t *page)
{
    uint16_t blocks = (uint16_t)(page->reserved >> FA_FULL_RETURN_SHIFT);
    return blocks > FA_FULL_RETURN_MAX ? FA_FULL_RETURN_MAX : blocks ? blocks : 1;
}

/* The sparse trigger of a page in its queue (mesh_page.c): blocks (live and on `free`) at which
 * it goes to the mesher. Half the page, and half as much again each time the page came back
 * from the mesher (down to a sixteenth): a page that a program keeps emptying and filling (a
 * tree built and destroyed over and over) would otherwise go to the mesher and back at every
 * round. */
static inline uint16_t fa_mesh_sparse_at(const fa_page_t *page)
{
    return (uint16_t)(page->reserved >> (1 + page->mesh_returns));
}

/* page_pool.c: whole pages that left their heap with live blocks, for any heap to take */
extern bool _fa_pages_migrated; /* some page went to the pool since the process started */
extern uint64_t _fa_page_pool_takes, _fa_page_pool_puts;
/* The heap holding page gives it up: off its queues, thread word 0, `free` given up. */
void _fa_page_pool_put(fa_page_t *page);
/* The heap holding a migrant whose last block came back gives it up, empty. */
void _fa_page_pool_put_empty(fa_page_t *page);
/* A pooled page of class bin with blocks to hand out, else an emptied pooled page set up for
 * bin, made heap's (not queued yet); NULL if none. */
fa_page_t *_fa_page_pool_take(fa_heap_t *heap, size_t bin);
/* With meshing on: the pooled pages with live blocks, at most fa_mesh_sparse_at of them, out
 * of the pool, for the mesher (linked through `next`). */
fa_page_t *_fa_page_pool_take_sparse(void);
/* A remote free pushed a block onto a page with no owner; `xfree` is the word it pushed. */
void _fa_page_pool_freed(fa_page_t *page, uintptr_t xfree);
/* The purger: collect the pooled pages' remote frees, release those emptied a purge delay ago
 * (all of them with `force`). */
void _fa_page_pool_sweep(uint64_t now, bool force, long *next);

/* heap.c */
/* A block of the heap's loan of class bin (not empty), handed out. */
void *_fa_heap_loan_pop(fa_heap_t *heap, size_t bin);
fa_heap_t *_fa_heap_init_thread(void);
/* The thread's heap for its remote-free counters: made at its first remote free, but not once
 * the thread has ended (NULL then). */
fa_heap_t *_fa_heap_for_counting(void);
/* A thread without a heap takes `heap` if it is parked; whether it did. */
bool _fa_heap_take_parked(fa_heap_t *heap);
/* The calling thread stops using its heap: its pages go to other heaps as they need them. */
void _fa_heap_abandon_mine(void);
/* The calling thread ends: its heap is parked, whole, for the next thread that starts (within
 * FITALLOC_PARKED_HEAPS), else abandoned. */
void _fa_heap_thread_ended(void);
/* Abandon the heaps parked for longer than FITALLOC_PURGE_DELAY * 10 ms (all if force). */
void _fa_heaps_unpark_expired(uint64_t now, bool force, long *next);
/* A page of class bin with a block to pop, made the head of its queue; NULL: no memory, or
 * the heap took a loan of blocks of the class instead of fresh memory (heap->loan[bin]). */
fa_page_t *_fa_heap_find_page(fa_heap_t *heap, size_t bin);
/* A realloc moved a block out of page: a head of ours left with no block live goes back to its
 * segment now, not after two looks for idle heads. A buffer grown by realloc steps through
 * the classes one after another, and each step left an empty head behind (record 094). */
void _fa_heap_realloc_left(fa_heap_t *heap, fa_page_t *page);
/* The owner gives back the empty pages its queues keep at hand: those unused since its last
 * look (all of them with `all`). */
void _fa_heap_release_idle_heads(fa_heap_t *heap, bool all);
/* fa_collect: the remote frees waiting in the heap's pages, taken now; the pages they empty go
 * (a queue's head stays: _fa_heap_release_idle_heads). */
void _fa_heap_take_remote_frees(fa_heap_t *heap);
void _fa_heap_settle_sparse(fa_heap_t *heap, bool all);
void _fa_heap_adopt_pages(fa_heap_t *heap, fa_segment_t *seg);
/* A local free took the page's `used` to 0 (it emptied, reached its full-page return point or
 * its sparse trigger): the page goes where that count says. */
void _fa_heap_requeue(fa_heap_t *heap, fa_page_t *page);
void _fa_heap_notify(fa_page_t *page);
void _fa_heap_local_free_full(fa_heap_t *heap, fa_page_t *page);
void _fa_heaps_foreach(void (*fn)(const fa_heap_t *heap, void *arg), void *arg);

/* large_populate.c: whether the program is seen to use its large blocks whole (then calloc
 * clears reused memory in place and faults the fresh pages in at once): the state
 * (used_whole; callocs_whole: learnt from calloc'd blocks alone, before callocs are faulted
 * in), or the state after a look at the block watched last (learn, once per large block
 * made); one in a few blocks all fresh is left alone to keep watching (probe: counts one);
 * watch a block whose first fresh byte is `fresh` (from the segment's start; watched if all
 * of it is fresh), or stop watching it (resized); populate [fresh, end); what a watched
 * block's resident pages teach, at its free. */
bool _fa_large_used_whole(void);
bool _fa_large_callocs_whole(void);
bool _fa_large_learn(void);
bool _fa_large_probe(void);
void _fa_large_watch(fa_segment_t *seg, size_t fresh, bool zero);
void _fa_large_unwatch(fa_segment_t *seg);
void _fa_large_populate(fa_segment_t *seg, size_t fresh, size_t end);
void _fa_large_watched_freed(fa_segment_t *seg);

/* alloc.c and alloc_aligned.c: the C semantics of the entry points (override/entry.c), which
 * record each call while tracing; these record nothing. */
void *_fa_malloc_generic(size_t n, fa_heap_t *heap);
/* profile_pages.c, while FITALLOC_PROFILE is on: block, a malloc of n past the inline fast
 * path, taken from `page` (its slot's page after the slow path; armed: the sample point came
 * at that slot's list), charged or sampled, and the page's list counted; returns block. */
fa_block_t *_fa_profile_served(fa_heap_t *heap, size_t n, fa_page_t *page, fa_block_t *block,
                               bool armed);
void *_fa_calloc(size_t count, size_t size);
void *_fa_realloc(void *p, size_t n);
void *_fa_aligned_alloc(size_t alignment, size_t n);
int _fa_posix_memalign(void **out, size_t alignment, size_t n);
void *_fa_memalign(size_t alignment, size_t n);
void *_fa_pvalloc(size_t n);
/* malloc_usable_size past the inline usual case (fastpath.h): large, secure, foreign pointers,
 * the other mode. */
size_t _fa_usable_size_generic(const void *p);

/* n bytes aligned to `alignment`, a power of two (valloc's page alignment, too). */
void *_fa_malloc_aligned(size_t alignment, size_t n);
/* The core's malloc past the fast paths, and its aligned allocation (alignment above 16): its
 * mode's (core_mode.c: _fa_core_mode, common/mode.h). */
void *_fa_core_malloc(size_t n);
void *_fa_core_aligned(size_t alignment, size_t n);
extern const struct fa_mode_ops _fa_core_mode;

/* free.c: `caller` names the function the program called, for reports */
void _fa_free_slow(void *p, const char *caller, size_t size);
void _fa_free_in_page(void *p, fa_page_t *page, const char *caller, size_t size);
void _fa_free_block(fa_page_t *page, fa_block_t *block); /* a checked block, no secure steps */
void _fa_free_marked(void *p, fa_page_t *page, const char *caller);
/* free's out-of-line step when the fast path takes `used` to 0: requeue, then a safe point. */
void _fa_free_reached_zero(fa_page_t *page);
bool _fa_block_is_free(const fa_page_t *page, const fa_block_t *block);

/* secure.c, or secure_absent.c in the default library: secure mode as process/ starts and ends
 * it (engine/secure/secure.h). After the options are read: secure mode's table if it is on,
 * else NULL (the default library's says on stderr that FITALLOC_SECURE=1 asks for the secure
 * library); at exit, this thread's held blocks, if any. */
const struct fa_mode_ops *_fa_secure_init(void);
void _fa_secure_check_quarantine(void);

/* guard.c: the first big blocks freed, kept inaccessible (default mode) */
/* A free of a block of its own page, checked: whether guard.c keeps it (else the caller frees
 * it). */
bool _fa_guard_free(fa_page_t *page, void *p);
bool _fa_guard_holds(const void *p);
/* p, a block of `page`, is one guard.c keeps: it was freed, and cannot be read. */
static inline bool fa_guard_holds(const fa_page_t *page, const void *p)
{
    return fa_unlikely(page->bin >= FA_MEDIUM_BINS) && _fa_guard_holds(p);
}
void _fa_guard_flush(void);          /* every block it keeps goes to its free list (fa_collect) */
void _fa_guard_expire(uint64_t now); /* the same, if none came for the purge delay */
/* The blocks of `page` guard.c keeps: freed, though the page counts them as live. */
size_t _fa_guard_held_in(const fa_page_t *page);

/* report.c */
FA_REPORT void _fa_bad_pointer(const char *caller, const void *p); /* says which of the two */
FA_REPORT void _fa_free_list_corrupt(const fa_page_t *page, const char *list);
/* A fresh page's memory at `at`, about to be provisioned, was written (page.c). */
FA_REPORT void _fa_overflow_into_fresh(const fa_page_t *page, const void *at);
void _fa_large_freed(uintptr_t block, size_t size); /* under _fa_global_lock */

/* large.c */
#define FA_LARGE_HEADER fa_align_up(sizeof(fa_segment_t) + sizeof(fa_page_t), FA_ALIGN)
void *_fa_large_alloc(size_t n, size_t alignment, bool zero);
/* The mapping's size for n bytes `offset` bytes into it, `after` bytes more after its last
 * page; 0 (errno ENOMEM) if too big. */
size_t _fa_large_mapping_size(size_t n, size_t offset, size_t after);
/* The block of n bytes `offset` bytes into seg (usable bytes `usable`; seg->large_block: the
 * block freed there last, or 0) made live: the header, the segment map, the live list, the
 * counters, and calloc's zeros up to `dirty` (cleared in place if `whole`, else whole pages
 * dropped). `populate`: the program uses its blocks whole (calloc faults the block in), else
 * its pages are watched. */
void *_fa_large_place(fa_segment_t *seg, size_t n, size_t offset, size_t usable, size_t dirty,
                      bool zero, bool whole, bool populate);
void _fa_large_free(fa_segment_t *seg);
void *_fa_large_realloc(fa_segment_t *seg, size_t n);
/* realloc kept the block and its request grew to n bytes, into the slack of a reused mapping. */
void _fa_large_grew_in_place(fa_segment_t *seg, size_t n);
void _fa_large_purge(uint64_t now, bool force, long *next);
/* fn for every live large block, under _fa_global_lock (fn must not allocate or free). */
void _fa_large_foreach(void (*fn)(const fa_segment_t *seg, void *arg), void *arg);

/* large_source.c: where large blocks' mappings come from and go back to */
/* A mapping of at least `size` bytes aligned to base_align: a cached one (fitted to size) or a
 * new one; *dirty: the bytes at its start that may hold old data (fresh pages are zero). NULL if
 * the OS has no memory. */
fa_segment_t *_fa_large_take(size_t size, size_t base_align, size_t *dirty);
/* A freed block's mapping: cached for reuse within the budget, or back to the OS (`expired`:
 * it has waited the purge delay already). */
void _fa_large_give(fa_segment_t *seg, bool expired);
/* Whether a freed block's mapping may serve another block (a default-mode one, segment
 * aligned, its block in the first chunk). */
bool _fa_large_reusable(const fa_segment_t *seg);
/* A new mapping of `size` bytes, aligned to base_align; NULL if the OS has no memory. */
fa_segment_t *_fa_large_map_new(size_t size, size_t base_align);
/* A mapping taken for reuse, fitted to `size` bytes (grown, or its tail given back); NULL if
 * it could not be grown (it is unmapped then). */
fa_segment_t *_fa_large_fit_mapping(fa_segment_t *seg, size_t size);
/* A live block's slack (bytes mapped beyond its request) is now `slack`. */
void _fa_large_set_slack(fa_segment_t *seg, size_t slack);
/* Give [keep, mapped) of seg's mapping back to the OS. */
void _fa_large_trim(fa_segment_t *seg, size_t keep);
void _fa_large_unmap(void *base, size_t size); /* large memory, with the statistics */
/* The cached mappings that have waited the purge delay (all if `force`) back to the OS. */
void _fa_large_cache_purge(uint64_t now, bool force, long *next);
/* What freed large memory kept mapped may reach: FITALLOC_LARGE_CACHE, or half the bytes of
 * the live large blocks if more (0 if the option is 0). */
size_t _fa_large_budget(void);

/* purge.c */
/* A purge pass's *next (ms until the next item is due, -1 for none) lowered to cover one more
 * item due at `due` (at least 1 ms away). */
static inline void fa_purge_note_due(long *next, uint64_t due, uint64_t now)
{
    long wait = due > now ? (long)(due - now) : 1;
    if (*next < 0 || wait < *next)
        *next = wait;
}
/* The end of an allocator call, no lock held and the heap whole: start the purger if a kick
 * asked for it. */
void _fa_purge_start_point(void);
void _fa_purge_want(void);   /* as a kick does: the next start point starts the purger */
int _fa_purge_threads(void); /* 1 while the purge thread runs, else 0 */
void _fa_purge_kick(void);
void _fa_purge_thread_ended(bool main_thread); /* from the thread-exit hook */
void _fa_purge_safe_point(fa_heap_t *heap);
void _fa_purge_after_fork(void);
void _fa_purge_fork_prepare(void);
void _fa_purge_fork_parent(void);
/* One pass now, by the pass given (none yet: nothing): ms until the next item is due, or -1. */
long _fa_purge_run(bool force);
void _fa_purge_set_pass(void (*pass)(uint64_t now, bool force, long *next));
/* purge_pass.c: gives the purger its pass (process start) */
void _fa_purge_init(void);

/* mesh_page.c and mesh.c: meshing (mesh.h) */
extern bool _fa_mesh_on;  /* FITALLOC_MESH, where it can run */
void _fa_mesh_init(void); /* after the options are read */
/* The page's holder (its heap, or a mesh pass for a pooled page) gives it to the mesher, out of
 * its queues or the pool; false if it could not. */
bool _fa_mesh_detach(fa_page_t *page);
/* A detached page of the class, never meshed, from the heap's own segments or a migrant, back
 * in the heap's hands (not queued yet); NULL if none (or the mesher is busy). */
fa_page_t *_fa_mesh_reattach(fa_heap_t *heap, size_t bin);
void _fa_mesh_pass(uint64_t now, bool force, long *next); /* from the purger */
/* Release the detached pages that frees have emptied since the last pass, now (a malloc that
 * would fail otherwise): whether any was. */
bool _fa_mesh_reclaim(void);
void _fa_mesh_fork_prepare(void); /* its locks */
void _fa_mesh_fork_parent(void);
void _fa_mesh_fork_child(void);
void _fa_mesh_before_fork(void); /* the locks, and the child's copy of the meshed pages */
void _fa_mesh_after_fork_parent(void);
void _fa_mesh_after_fork_child(void);

/* counters.c, and stats.c (the report) */
#define FA_COUNTERS(X)                                                                             \
    X(large_allocs)                                                                                \
    X(large_frees)                                                                                 \
    X(large_in_use)                                                                                \
    X(zero_allocs) /* secure mode's malloc(0) (secure_zero.c) */                                   \
    X(zero_frees)                                                                                  \
    X(reserved)                                                                                    \
    X(committed)                                                                                   \
    X(peak_committed)                                                                              \
    X(purged)                                                                                      \
    X(segments)                                                                                    \
    X(threads)                                                                                     \
    X(abandoned)                                                                                   \
    X(mesh_detached)                                                                               \
    X(mesh_saved)                                                                                  \
    X(mesh_returned)                                                                               \
    X(mesh_merges)
struct fa_counters {
#define FA_COUNTER_FIELD(name) uint64_t name;
    FA_COUNTERS(FA_COUNTER_FIELD)
#undef FA_COUNTER_FIELD
    uint64_t bin_frees[FA_BINS];    /* frees of pages no longer in use (folded in when released) */
    uint64_t remote_frees[FA_BINS]; /* remote frees of exited threads and threads without heaps */
    uint64_t collected[FA_BINS];    /* remote frees collected in pages no longer in use */
};
extern struct fa_counters _fa_counters;
#define fa_count(name, delta) fa_atomic_add_relaxed(&_fa_counters.name, (delta))
void _fa_stats_commit(int64_t delta);
void _fa_stats_print(int fd, bool json);

/* check.c: heap invariants, run after every slow-path change when FA_DEBUG is set */
void _fa_heap_check(const fa_heap_t *heap);
void _fa_heap_check_sometimes(const fa_heap_t *heap);
#ifdef FA_DEBUG
#define FA_CHECK_HEAP(heap) _fa_heap_check_sometimes(heap)
#else
#define FA_CHECK_HEAP(heap) ((void)0)
#endif

#endif

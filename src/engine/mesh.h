/* Meshing (mesh_page.c, mesh.c): the records of pages given to the mesher.
 *
 * A small page whose blocks have mostly been freed is *detached* from its heap: its free lists
 * are dropped and a bitmap of its live blocks takes their place; it serves no malloc, and every
 * free into it takes the remote path (its owner word says FA_OWNER_SLOW, its thread word 0),
 * which the mesher collects. Such pages hold no free-list link, so their free blocks' memory is
 * nobody's. The mesher can then:
 *   - give back the OS pages (frames, 4 KiB) of a detached page that hold no live byte;
 *   - mesh: put frame k of two or more detached pages of one size class on one physical page
 *     when their live blocks in it never overlap, copying each page's live bytes there and
 *     mapping every virtual frame onto it (a page of a memory file, mesh.c). The blocks keep
 *     their addresses; each frame's live bytes come from exactly one member.
 * A detached page that was never meshed goes back to a heap when that heap needs a page of its
 * class (its free list rebuilt from the bitmap); a meshed one stays with the mesher until its
 * last block is freed, when its frames are mapped back to fresh private memory and the page is
 * released as any other.
 *
 * Invariants (under _fa_mesh_lock, which the mesher holds for a whole pass):
 *   page->mesh == rec  <=>  rec->page == page and the page is detached;
 *   popcount(rec->live) == page->used (after each collection; frees in flight are counted in
 *     `used` and still set in `live`, so a mesh copies them as live);
 *   for every group and every block slot of its frame, at most one member has it live;
 *   rec->shared == the number of frames with a group; returned frames have no live byte.
 */
#ifndef FA_MESH_H
#define FA_MESH_H

#include "engine/engine.h"

#define FA_MESH_FRAME FA_OS_PAGE
#define FA_MESH_FRAMES (((size_t)1 << FA_SMALL_PAGE_SHIFT) / FA_MESH_FRAME)
#define FA_MESH_SLOTS (((size_t)1 << FA_SMALL_PAGE_SHIFT) / FA_ALIGN)
#define FA_MESH_NO_REGION SIZE_MAX

struct fa_mesh_group_s;

/* Frame `index` of a detached page, as a member of the group that shares its physical page. */
typedef struct fa_mesh_frame_s {
    struct fa_mesh_group_s *group; /* NULL: the page's own private memory */
    struct fa_mesh_frame_s *next;  /* the group's next member */
    struct fa_mesh_page_s *rec;
    uint32_t index;
} fa_mesh_frame_t;

/* One physical page of the memory file and the virtual frames mapped onto it. */
typedef struct fa_mesh_group_s {
    size_t offset; /* in the memory file */
    uint32_t members;
    fa_mesh_frame_t *first;
    struct fa_mesh_group_s *next; /* the pool of unused groups (each keeps its offset) */
} fa_mesh_group_t;

typedef struct fa_mesh_page_s {
    fa_page_t *page;
    struct fa_mesh_page_s *next; /* its class's list of detached pages, or the pool */
    struct fa_mesh_page_s *prev;
    uint32_t shared;   /* frames in a group */
    uint32_t returned; /* bit k: frame k held no live byte and went back to the OS */
    /* Bit k: frame k is registered for freezing (platform/freeze.c) until mapped anew; the
     * whole page is registered at once, at the first merge that freezes one of its frames. */
    uint32_t prepared;
    /* Bit k: frame k joined another group in this batch of the pass and is still to be frozen,
     * copied and mapped onto it (mesh.c, "batches"). */
    uint32_t moving;
    /* The page's region of the memory file (mesh.c), where the groups its frames start go,
     * frame k at region + k pages; FA_MESH_NO_REGION until its first. */
    size_t region;
    /* Its live blocks (or a group of one of its frames) changed since the last pass that went
     * through its class: only pairs with such a page can mesh now that could not before. */
    bool changed;
    /* A fork child will not inherit its shared frames' mappings (mesh.c, "fork"): set at a
     * fork, cleared when one of them is mapped again. */
    bool dont_fork;
    fa_mesh_frame_t frames[FA_MESH_FRAMES];
    uint64_t live[FA_MESH_SLOTS / 64]; /* bit i: block i is in use */
} fa_mesh_page_t;

/* Whether block slot i of a detached page is live (read by free paths of any thread, while the
 * mesher clears bits: atomically). */
static inline bool fa_mesh_live(const fa_mesh_page_t *rec, size_t slot)
{
    return fa_atomic_load_relaxed(&rec->live[slot / 64]) >> (slot % 64) & 1;
}

static inline size_t fa_mesh_slot(const fa_page_t *page, uintptr_t p)
{
    return (size_t)(p - page->start) / page->block_size;
}

/* The frames a page's blocks span (a segment's page 0 is half a page). */
static inline size_t fa_mesh_frame_count(const fa_page_t *page)
{
    size_t bytes = (size_t)page->reserved * page->block_size;
    return (bytes + FA_MESH_FRAME - 1) / FA_MESH_FRAME;
}

static inline uintptr_t fa_mesh_frame_address(const fa_mesh_frame_t *f)
{
    return f->rec->page->start + (uintptr_t)f->index * FA_MESH_FRAME;
}

/* mesh_page.c, for mesh.c: the lock, the detached pages of each small class, taking the frees
 * made into a page, and giving an empty page back (its frames unmeshed first, by mesh.c). */
extern fa_mutex_t _fa_mesh_lock;
extern fa_mesh_page_t *_fa_mesh_pages[FA_SMALL_BINS];
void _fa_mesh_take_detached(void); /* pages detached since the last look join their lists */
/* The page pool's pages left sparse (no heap holds them, so none would detach them) detached. */
void _fa_mesh_detach_pooled(void);
void _fa_mesh_collect(fa_mesh_page_t *rec);
void _fa_mesh_release(fa_mesh_page_t *rec);
/* mesh.c, for mesh_page.c: a page's frames back to private memory (its last block freed), and
 * its region of the memory file let go. */
void _fa_mesh_unmesh(fa_mesh_page_t *rec);
/* mesh_budget.c, for mesh.c: whether the budget (FITALLOC_MESH_CPU) allows a pass, then more
 * merges in it; the pass's CPU counted from its start to its end. */
bool _fa_mesh_budget_pass_start(void);
long _fa_mesh_budget_wait_ms(void); /* without credit: when to look again */
bool _fa_mesh_budget_left(void);
void _fa_mesh_budget_pass_end(void);
/* A test's hook, run between a merge's copy and its remapping (tests/mesh/test_mesh_efault.c). */
extern void (*_fa_mesh_test_window_hook)(void);

#endif

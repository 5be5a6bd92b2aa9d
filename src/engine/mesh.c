/* Meshing (mesh.h): the mesher's pass, run by the purger, and the physical pages it shares.
 *
 * Frame k of every detached page of a class covers the same blocks (pages start on an OS page
 * and hold the same class), so two such frames can share one physical page when no block is
 * live in both. The pass takes, class by class and frame by frame, the frames (or groups of
 * frames already sharing a page) that hold live bytes, fullest first, and merges each into the
 * first one before it, within a window, whose live blocks it does not overlap (first fit
 * decreasing). The merges of a class are decided first, then carried out page by page (see
 * "batches"):
 *   1. the virtual frames whose bytes are copied (the frames that join another group) are
 *      frozen (platform/freeze.c): a writer there, a thread or the kernel in a system call (a
 *      read into a block), waits in the kernel; with mprotect instead, the kernel's write would
 *      fail with EFAULT. A process that may not freeze merges nothing (merging_ready);
 *   2. each frame's live bytes are copied into its group's page of the memory file;
 *   3. the frames are mapped onto those file pages, read/write (the mapping replaces the
 *      frozen one, and the private page it held goes back to the OS);
 *   4. the writers waiting wake (every few pages), and find the new mapping.
 * A merge saves one physical page. Frames of a detached page that hold no live byte go back to
 * the OS without a merge (madvise), and come back as fresh zero pages when the page is used
 * again. Only what is meshed lives in the file: programs that never mesh keep anonymous
 * memory and pay nothing.
 *
 * Costs and limits: each merge is a few system calls (a freeze and an mmap for each run of a
 * page's frames moved in a batch, a registration per page; a read of the writers waiting
 * every few pages);
 * each virtual frame mapped onto the file may be a kernel mapping of its own, so the shared
 * frames are kept below half of vm.max_map_count; a pass makes at most FA_MESH_MERGES_PER_PASS
 * merges and tries only pairs with a page that changed since the last pass through its class.
 *
 * fork: the file is shared memory, which a child would share with its parent. Before fork
 * every page with a shared frame is frozen (if other threads could write and the process can
 * freeze) and the file's pages are copied into a new file; the parent lets its writes go on. The child does not inherit the
 * shared frames' mappings (MADV_DONTFORK: the kernel copies none at fork) and maps them all
 * onto the copy before fork returns in it, so that a system call of the child writing into a
 * block finds it mapped (a frame left a hole until the child's first touch made such a call
 * fail with EFAULT). The cost follows the meshed memory, not the heap: a mapping per run of
 * frames on consecutive pages of the file. posix_spawn, vfork and system() share the parent's
 * memory until exec and need nothing. */
#include "engine/mesh.h"

#include <string.h>

#include "common/options.h"
#include "platform/atomic.h"

#define FA_MESH_FILE_SIZE ((size_t)64 << 30) /* sparse: pages exist once written */
#define FA_MESH_MAX_MEMBERS 16
#define FA_MESH_WINDOW 256 /* a frame looks for a partner among the next 256 */
#define FA_MESH_MERGES_PER_PASS 2048
#define FA_MESH_WAKE_EVERY 16 /* pages whose frames were mapped anew */
#define FA_MESH_BATCH 1024    /* pages with frames to move, at most, in a batch */
#define FA_MESH_UNITS 4096    /* frames (or groups) looked at per class and frame index */
#define FA_MESH_FRAME_SLOTS (FA_MESH_FRAME / FA_ALIGN + 1) /* most slots a frame touches */
#define FA_MESH_MASK_WORDS ((FA_MESH_FRAME_SLOTS + 63) / 64)

static int file = -1;
static char *window; /* the whole file, mapped for the mesher's copies */
/* The file is handed out in regions of a page's size, and a group of frames k always lives on
 * page k of a region: the page after its members' frame k-1 group where that is free (the
 * pass also prefers such partners), else in its first member's region, so that a page's
 * neighbouring frames meshed map neighbouring pages of the file and the kernel keeps them in
 * one mapping. A region is used while its page is detached or a group lives in it
 * (region_users); then it is free. */
#define FA_MESH_REGION ((size_t)1 << FA_SMALL_PAGE_SHIFT)
#define FA_MESH_REGIONS (FA_MESH_FILE_SIZE / FA_MESH_REGION)
static size_t file_top; /* regions below it have been handed out */
static uint16_t *region_users;
static uint16_t *region_slots; /* bit k: page k of the region holds a group */
static uint32_t *region_next;  /* the free regions' list (+1: 0 ends it) */
static uint32_t regions_free;
static fa_mesh_group_t *groups_free;
static fa_mesh_group_t *group_chunk; /* groups not handed out yet, and how many */
static size_t group_chunk_left;
static long shared_frames, shared_limit;
static uint64_t next_pass;
/* For tests only (mesh.h): called while a merge's frames are protected, to hold the window
 * open long enough to be hit. NULL in every program but the test that sets it. */
void (*_fa_mesh_test_window_hook)(void);

/* ---- the memory file and its pages ---- */

static bool file_ready(void)
{
    if (window)
        return true;
    region_users = _fa_os_map_aligned(FA_MESH_REGIONS * sizeof *region_users, FA_OS_PAGE);
    region_next = _fa_os_map_aligned(FA_MESH_REGIONS * sizeof *region_next, FA_OS_PAGE);
    region_slots = _fa_os_map_aligned(FA_MESH_REGIONS * sizeof *region_slots, FA_OS_PAGE);
    if (!region_users || !region_next || !region_slots)
        return false;
    file = _fa_os_shared_create(FA_MESH_FILE_SIZE);
    if (file < 0)
        return false;
    window = _fa_os_shared_window(file, FA_MESH_FILE_SIZE);
    if (!window) {
        _fa_os_close(file);
        file = -1;
        return false;
    }
    /* A shared frame is a kernel mapping of its own (and splits its private neighbours': 1.1
     * mappings a frame, measured): half of vm.max_map_count at most, half left to the program. */
    shared_limit = _fa_os_max_mappings() / 2;
    return true;
}

/* Whether merges may copy frames: FITALLOC_MESH_MERGE allows them, the frames copied can be
 * frozen against the kernel's writes too (a read into a block would fail with EFAULT against a
 * read-only frame), and the memory file exists. Where not, passes still give back the frames
 * without a live byte, which needs no copy; FITALLOC_VERBOSE=1 says so, once. */
static bool merging_ready(void)
{
    static bool said;
    const char *why = NULL;
    if (!fa_option(mesh_merge))
        why = "FITALLOC_MESH_MERGE=0";
    else if (_fa_os_freeze_ready(&why) && file_ready())
        return true;
    if (!said && fa_option(verbose))
        _fa_message(2, "fitalloc: meshing gives back empty pages but merges none: %s\n",
                    why ? why : "no memory file (memfd_create refused?)");
    said = true;
    return false;
}

static void region_release(size_t region)
{
    size_t r = region / FA_MESH_REGION;
    if (--region_users[r] == 0) {
        region_next[r] = regions_free;
        regions_free = (uint32_t)r + 1;
    }
}

/* A region of the file nobody uses, or FA_MESH_NO_REGION. */
static size_t region_new(void)
{
    size_t r;
    if (regions_free) {
        r = regions_free - 1;
        regions_free = region_next[r];
    } else if (file_top < FA_MESH_REGIONS) {
        r = file_top++;
    } else {
        return FA_MESH_NO_REGION;
    }
    region_users[r] = 0;
    return r * FA_MESH_REGION;
}

static bool slot_free(size_t offset)
{
    return !(region_slots[offset / FA_MESH_REGION] >> (offset % FA_MESH_REGION / FA_MESH_FRAME) &
             1);
}

/* A group for frame k of rec (its first member): at `want` if that page of the file is free (a
 * member's frame k-1 is on the page before it, so that the kernel keeps the two frames in one
 * mapping), else page k of rec's region, else page k of a region of its own. */
static fa_mesh_group_t *group_new(fa_mesh_page_t *rec, size_t k, size_t want)
{
    size_t offset = want;
    if (offset == FA_MESH_NO_REGION || !slot_free(offset)) {
        if (rec->region == FA_MESH_NO_REGION) {
            rec->region = region_new();
            if (rec->region == FA_MESH_NO_REGION)
                return NULL;
            region_users[rec->region / FA_MESH_REGION] = 1;
        }
        offset = rec->region + k * FA_MESH_FRAME;
        if (!slot_free(offset)) { /* taken by another page's neighbour */
            size_t region = region_new();
            if (region == FA_MESH_NO_REGION)
                return NULL;
            offset = region + k * FA_MESH_FRAME;
        }
    }
    fa_mesh_group_t *g = groups_free;
    if (g) {
        groups_free = g->next;
    } else {
        if (!group_chunk_left) {
            size_t chunk = 64 << 10;
            group_chunk = _fa_os_map_aligned(chunk, FA_OS_PAGE);
            if (!group_chunk)
                return NULL;
            group_chunk_left = chunk / sizeof *group_chunk;
        }
        g = group_chunk++;
        group_chunk_left--;
    }
    g->offset = offset;
    region_users[offset / FA_MESH_REGION]++;
    region_slots[offset / FA_MESH_REGION] |=
        (uint16_t)(1u << offset % FA_MESH_REGION / FA_MESH_FRAME);
    g->members = 0;
    g->first = NULL;
    return g;
}

static void group_free(fa_mesh_group_t *g)
{
    _fa_os_shared_punch(file, g->offset, FA_MESH_FRAME);
    region_slots[g->offset / FA_MESH_REGION] &=
        (uint16_t) ~(1u << g->offset % FA_MESH_REGION / FA_MESH_FRAME);
    region_release(g->offset);
    g->next = groups_free;
    groups_free = g;
}

/* ---- batches: a pass's merges are decided first, then carried out page by page ----
 *
 * A merge only changes the records at once: its frames joining another group are marked
 * moving, and the groups it empties wait. Then each page with moving frames is frozen, copied
 * and mapped in runs: one freeze and one mmap for neighbouring frames (the placement above puts
 * a page's neighbouring frames on neighbouring file pages where it can), rather than one of
 * each a frame. Each frame copies its own page's live bytes from where it is mapped still, so
 * the copies of one group's members may come in any order; a frame mapped onto its new group
 * writes only its own blocks there. The groups emptied go last, once no frame maps them. */
static fa_mesh_page_t *batch[FA_MESH_BATCH] FA_BSS_APART;
static size_t batch_pages;
static fa_mesh_group_t *batch_emptied;

static void join(fa_mesh_frame_t *f, fa_mesh_group_t *g)
{
    fa_mesh_page_t *rec = f->rec;
    if (!rec->moving)
        batch[batch_pages++] = rec;
    rec->moving |= 1u << f->index;
    if (!f->group) {
        f->rec->shared++;
        shared_frames++;
    }
    f->group = g;
    f->next = g->first;
    g->first = f;
    g->members++;
}

/* Every virtual frame of a unit (a private frame, or a group's members). */
#define FOR_MEMBERS(m, unit)                                                                       \
    for (fa_mesh_frame_t *m = (unit)->group ? (unit)->group->first : (unit); m;                    \
         m = (unit)->group ? m->next : NULL)

/* A frame registered for freezing (platform/freeze.c): its whole page at its first merge, as a
 * page's frames tend to be merged together (a registration per frame split the kernel's
 * mapping at every frame). A page that cannot be registered whole (a part of it held by the
 * program's own userfaultfd) registers frame by frame; false if the frame cannot be. */
static bool prepare(fa_mesh_frame_t *m)
{
    fa_mesh_page_t *rec = m->rec;
    if (rec->prepared >> m->index & 1)
        return true;
    size_t frames = fa_mesh_frame_count(rec->page);
    if (_fa_os_freeze_prepare((void *)rec->page->start, frames * FA_MESH_FRAME)) {
        rec->prepared = (uint32_t)(((uint64_t)1 << frames) - 1);
        return true;
    }
    if (!_fa_os_freeze_prepare((void *)fa_mesh_frame_address(m), FA_MESH_FRAME))
        return false;
    rec->prepared |= 1u << m->index;
    return true;
}

/* Whether every frame of a unit can be frozen when its batch moves it. */
static bool prepare_unit(fa_mesh_frame_t *unit)
{
    FOR_MEMBERS(m, unit)
    {
        if (!prepare(m))
            return false;
    }
    return true;
}

/* ---- which blocks are live in a frame ---- */

/* The block slots frame k of a page of `size`-byte blocks touches: [*first, *first + *count).
 * By the block size alone, so the same for every page of a class: slots a page does not have
 * (page 0 of a segment is half a page; a page may not be fully provisioned) are never live in
 * its bitmap. */
static void frame_slots(size_t size, size_t k, size_t *first, size_t *count)
{
    size_t lo = k * FA_MESH_FRAME / size;
    size_t hi = ((k + 1) * FA_MESH_FRAME - 1) / size;
    *first = lo;
    *count = hi - lo + 1;
}

typedef struct {
    fa_mesh_frame_t *unit;
    uint64_t mask[FA_MESH_MASK_WORDS]; /* live slots, from the frame's first */
    /* Where frame k of its (first) page would be on the file page after its frame k-1's, so
     * that the two are one kernel mapping; FA_MESH_NO_REGION if frame k-1 is not shared. */
    size_t want;
    uint32_t members;
    bool merged;
    bool changed; /* a member's page changed since the last pass (fa_mesh_page_t.changed) */
} fa_mesh_unit_t;

/* Bits [first, first + count) of a page's live bitmap, from bit 0 of mask on: whole words
 * shifted into place rather than bit by bit (the pass reads every frame of every detached page). */
static void live_bits(const fa_mesh_page_t *rec, size_t first, size_t count, uint64_t *mask)
{
    size_t shift = first % 64, word = first / 64;
    for (size_t w = 0; w * 64 < count; w++) {
        uint64_t lo = fa_atomic_load_relaxed(&rec->live[word + w]) >> shift;
        uint64_t hi = shift && word + w + 1 < FA_MESH_SLOTS / 64
                          ? fa_atomic_load_relaxed(&rec->live[word + w + 1]) << (64 - shift)
                          : 0;
        uint64_t bits = lo | hi;
        if (count - w * 64 < 64)
            bits &= ((uint64_t)1 << (count - w * 64)) - 1;
        mask[w] |= bits;
    }
}

/* The live slots of a unit's frame: the union over its members. Whether any is live. */
static bool unit_mask(fa_mesh_frame_t *unit, size_t first, size_t count, uint64_t *mask)
{
    for (size_t w = 0; w < FA_MESH_MASK_WORDS; w++)
        mask[w] = 0;
    FOR_MEMBERS(m, unit)
    {
        live_bits(m->rec, first, count, mask);
    }
    uint64_t any = 0;
    for (size_t w = 0; w < FA_MESH_MASK_WORDS; w++)
        any |= mask[w];
    return any != 0;
}

static bool disjoint(const uint64_t *a, const uint64_t *b)
{
    for (size_t w = 0; w < FA_MESH_MASK_WORDS; w++)
        if (a[w] & b[w])
            return false;
    return true;
}

/* Copy the live bytes `mask` marks, from the frame at `from`, into the file page at `offset`. */
static void copy_live(uintptr_t from, size_t offset, const fa_page_t *page, size_t k, size_t first,
                      const uint64_t *mask, size_t count)
{
    size_t size = page->block_size, frame_start = k * FA_MESH_FRAME;
    for (size_t i = 0; i < count;) {
        if (!(mask[i / 64] >> (i % 64) & 1)) {
            i++;
            continue;
        }
        size_t run = i;
        while (run < count && mask[run / 64] >> (run % 64) & 1)
            run++;
        /* Slots [i, run) from their first byte in the frame to their last. */
        size_t begin = (first + i) * size, end = (first + run) * size;
        if (begin < frame_start)
            begin = frame_start;
        if (end > frame_start + FA_MESH_FRAME)
            end = frame_start + FA_MESH_FRAME;
        memcpy(window + offset + (begin - frame_start), (const char *)from + (begin - frame_start),
               end - begin);
        i = run;
    }
}

/* A page's moving frames: frozen, their live bytes copied to their new group's file page, and
 * mapped onto it, a run of neighbouring frames (on neighbouring file pages) in one call each. */
static void batch_page(fa_mesh_page_t *rec)
{
    uint32_t moving = rec->moving;
    fa_page_t *page = rec->page;
    rec->moving = 0;
    for (size_t k = 0, run; k < FA_MESH_FRAMES; k += run + 1) {
        for (run = 0; k + run < FA_MESH_FRAMES && moving >> (k + run) & 1;)
            run++;
        if (run && !_fa_os_freeze_prepared((void *)fa_mesh_frame_address(&rec->frames[k]),
                                           run * FA_MESH_FRAME))
            _fa_fatal("fitalloc: meshing could not freeze %p\n",
                      (void *)fa_mesh_frame_address(&rec->frames[k]));
    }
    for (size_t k = 0; k < FA_MESH_FRAMES; k++) {
        if (!(moving >> k & 1))
            continue;
        size_t first, count;
        uint64_t mask[FA_MESH_MASK_WORDS] = {0};
        frame_slots(page->block_size, k, &first, &count);
        live_bits(rec, first, count, mask);
        copy_live(fa_mesh_frame_address(&rec->frames[k]), rec->frames[k].group->offset, page, k,
                  first, mask, count);
    }
    if (_fa_mesh_test_window_hook)
        _fa_mesh_test_window_hook();
    for (size_t k = 0, run; k < FA_MESH_FRAMES; k += run) {
        if (!(moving >> k & 1)) {
            run = 1;
            continue;
        }
        size_t offset = rec->frames[k].group->offset;
        for (run = 1; k + run < FA_MESH_FRAMES && moving >> (k + run) & 1 &&
                      rec->frames[k + run].group->offset == offset + run * FA_MESH_FRAME;)
            run++;
        void *at = (void *)fa_mesh_frame_address(&rec->frames[k]);
        if (!_fa_os_map_shared_at(at, run * FA_MESH_FRAME, file, offset))
            _fa_fatal("fitalloc: meshing could not map a page of its memory file at %p\n", at);
    }
    /* The new mappings carry no registration, and the child of a fork would inherit them. */
    rec->prepared &= ~moving;
    rec->dont_fork = false;
}

/* The batch's pages moved, then the groups it emptied freed. The writers that waited on frames
 * mapped anew are woken every few pages rather than after each: the look for them is a system
 * call, and finds none nearly always. */
static void batch_run(void)
{
    for (size_t i = 0; i < batch_pages; i++) {
        batch_page(batch[i]);
        if ((i + 1) % FA_MESH_WAKE_EVERY == 0 || i + 1 == batch_pages)
            _fa_os_freeze_wake_replaced();
    }
    batch_pages = 0;
    while (batch_emptied) {
        fa_mesh_group_t *g = batch_emptied;
        batch_emptied = g->next;
        group_free(g);
    }
}

/* Put unit b's frame on a's physical page (or both on a new one). false: nothing changed. */
static bool merge(fa_mesh_unit_t *a, fa_mesh_unit_t *b, size_t k)
{
    /* b's frames are the ones frozen and mapped anew: b is the side with fewer members (a
     * private frame before a group; of two groups, the smaller one moves). */
    if (!a->unit->group ? b->unit->group != NULL : b->unit->group && b->members > a->members) {
        fa_mesh_unit_t *t = a;
        a = b;
        b = t;
    }
    /* Only the frames that move are copied and must hold still: a group's page stays
     * writable, as the bytes copied into it are not its members' live ones. */
    bool fresh = !a->unit->group;
    if ((fresh && !prepare_unit(a->unit)) || !prepare_unit(b->unit))
        return false;
    size_t want = a->want != FA_MESH_NO_REGION && slot_free(a->want) ? a->want : b->want;
    fa_mesh_group_t *g = fresh ? group_new(a->unit->rec, k, want) : a->unit->group;
    if (!g)
        return false;
    if (fresh)
        join(a->unit, g);
    fa_mesh_group_t *old = b->unit->group;
    fa_mesh_frame_t *m = old ? old->first : b->unit;
    while (m) {
        fa_mesh_frame_t *next = old ? m->next : NULL;
        if (old) { /* from its group to g */
            m->group = NULL;
            m->rec->shared--;
            shared_frames--;
        }
        join(m, g);
        m = next;
    }
    if (old) { /* freed once no frame maps it */
        old->next = batch_emptied;
        batch_emptied = old;
    }
    a->unit = g->first;
    a->members = g->members;
    for (size_t w = 0; w < FA_MESH_MASK_WORDS; w++)
        a->mask[w] |= b->mask[w];
    a->changed |= b->changed;
    b->merged = true;
    _fa_stats_commit(-(int64_t)FA_MESH_FRAME);
    fa_count(mesh_saved, FA_MESH_FRAME);
    fa_count(mesh_merges, 1);
    return true;
}

void _fa_mesh_unmesh(fa_mesh_page_t *rec)
{
    if (rec->region != FA_MESH_NO_REGION) {
        region_release(rec->region);
        rec->region = FA_MESH_NO_REGION;
    }
    size_t run_end = 0; /* frames below it are mapped fresh already */
    for (size_t k = 0; k < FA_MESH_FRAMES && rec->shared; k++) {
        fa_mesh_frame_t *f = &rec->frames[k];
        fa_mesh_group_t *g = f->group;
        if (!g)
            continue;
        /* The page has no live block: its frames need no copy, only memory of their own; a
         * run of shared frames in one call (an emptied meshed page has most of them shared). */
        if (k >= run_end) {
            run_end = k + 1;
            while (run_end < FA_MESH_FRAMES && rec->frames[run_end].group)
                run_end++;
            if (!_fa_os_map_fresh_at((void *)fa_mesh_frame_address(f),
                                     (run_end - k) * FA_MESH_FRAME))
                _fa_fatal("fitalloc: meshing could not unmap %p\n",
                          (void *)fa_mesh_frame_address(f));
        }
        rec->prepared &= ~(1u << k);
        fa_mesh_frame_t **link = &g->first;
        while (*link != f)
            link = &(*link)->next;
        *link = f->next;
        f->group = NULL;
        f->next = NULL;
        rec->shared--;
        shared_frames--;
        if (--g->members) {
            /* The group's live blocks are fewer: it may mesh where it could not. */
            for (fa_mesh_frame_t *m = g->first; m; m = m->next)
                m->rec->changed = true;
            /* The page it leaves still holds the others' blocks: one physical page less saved. */
            _fa_stats_commit(FA_MESH_FRAME);
            fa_count(mesh_saved, (uint64_t)-FA_MESH_FRAME);
        } else {
            group_free(g);
        }
    }
}

/* Frames of detached pages that hold no live byte go back to the OS (no merge needed). */
static void return_empty_frames(fa_mesh_page_t *rec)
{
    fa_page_t *page = rec->page;
    for (size_t k = 0; k < fa_mesh_frame_count(page); k++) {
        fa_mesh_frame_t *f = &rec->frames[k];
        size_t first, count;
        uint64_t mask[FA_MESH_MASK_WORDS];
        if (f->group || rec->returned >> k & 1)
            continue;
        frame_slots(page->block_size, k, &first, &count);
        if (unit_mask(f, first, count, mask))
            continue;
        _fa_os_purge((void *)fa_mesh_frame_address(f), FA_MESH_FRAME);
        rec->returned |= 1u << k;
        _fa_stats_commit(-(int64_t)FA_MESH_FRAME);
        fa_count(mesh_returned, FA_MESH_FRAME);
    }
}

static fa_mesh_unit_t units[FA_MESH_UNITS] FA_BSS_APART;

/* A unit's live slots. */
static size_t unit_live(const fa_mesh_unit_t *u)
{
    size_t live = 0;
    for (size_t w = 0; w < FA_MESH_MASK_WORDS; w++)
        live += (size_t)__builtin_popcountll(u->mask[w]);
    return live;
}

/* Whether merging b into a (or a into b) puts a private frame on the file page after its
 * frame k-1's: its two frames are then one kernel mapping. */
static bool neighbour(const fa_mesh_unit_t *a, const fa_mesh_unit_t *b)
{
    const fa_mesh_group_t *ga = a->unit->group, *gb = b->unit->group;
    if (ga && gb)
        return false;
    if (ga || gb)
        return ga ? b->want == ga->offset : a->want == gb->offset;
    return a->want != FA_MESH_NO_REGION && a->want == b->want;
}

/* Mesh frame k of the detached pages of one class; returns the merges made. */
static size_t mesh_frames(fa_mesh_page_t *list, size_t k, size_t budget)
{
    size_t n = 0, first, count;
    frame_slots(list->page->block_size, k, &first, &count);
    for (fa_mesh_page_t *rec = list; rec && n < FA_MESH_UNITS; rec = rec->next) {
        fa_mesh_frame_t *f = &rec->frames[k];
        if (k >= fa_mesh_frame_count(rec->page) || rec->returned >> k & 1 ||
            (f->group && f->group->first != f))
            continue;
        fa_mesh_unit_t *u = &units[n];
        u->unit = f;
        u->members = f->group ? f->group->members : 1;
        const fa_mesh_group_t *before = k ? rec->frames[k - 1].group : NULL;
        u->want = before ? before->offset + FA_MESH_FRAME : FA_MESH_NO_REGION;
        u->merged = false;
        u->changed = false;
        FOR_MEMBERS(m, f)
        {
            u->changed |= m->rec->changed;
        }
        if (unit_mask(f, first, count, u->mask))
            n++;
    }
    /* Fullest first (a counting sort by live slots): first fit decreasing packs better than
     * first fit in list order (the Redis experiment's PSS 1.29-1.32 -> 1.23-1.25 of its
     * used_memory, three interleaved runs each). */
    static uint16_t order[FA_MESH_UNITS] FA_BSS_APART;
    static uint32_t start[FA_MESH_FRAME_SLOTS + 2] FA_BSS_APART;
    for (size_t c = 0; c < FA_MESH_FRAME_SLOTS + 2; c++)
        start[c] = 0;
    for (size_t i = 0; i < n; i++)
        start[FA_MESH_FRAME_SLOTS - unit_live(&units[i]) + 1]++;
    for (size_t c = 1; c < FA_MESH_FRAME_SLOTS + 2; c++)
        start[c] += start[c - 1];
    for (size_t i = 0; i < n; i++)
        order[start[FA_MESH_FRAME_SLOTS - unit_live(&units[i])]++] = (uint16_t)i;
    size_t merges = 0;
    for (size_t i = 0; i < n && merges < budget; i++) {
        /* First the partners that keep a member's frame in one mapping with its frame k-1. */
        for (int neighbours = 1; neighbours >= 0; neighbours--) {
            fa_mesh_unit_t *a = &units[order[i]];
            for (size_t j = i + 1; j < n && j <= i + FA_MESH_WINDOW && merges < budget; j++) {
                fa_mesh_unit_t *b = &units[order[j]];
                /* Two units that have not changed since the last pass were tried then. */
                if (a->merged || b->merged || (!a->changed && !b->changed) ||
                    (neighbours && !neighbour(a, b)) ||
                    a->members + b->members > FA_MESH_MAX_MEMBERS ||
                    shared_frames + (long)b->members + 1 > shared_limit ||
                    !disjoint(a->mask, b->mask))
                    continue;
                if (batch_pages + b->members + 1 > FA_MESH_BATCH)
                    batch_run();
                merges += merge(a, b, k);
            }
        }
    }
    return merges;
}

/* Under _fa_mesh_lock: the frees made into detached pages; the pages they emptied released
 * (counted), and with `give_back` the frames without a live byte of the others. *any: whether
 * pages stay detached. */
static size_t collect_all(bool give_back, bool *any)
{
    size_t released = 0;
    _fa_mesh_take_detached();
    for (size_t bin = 0; bin < FA_SMALL_BINS; bin++) {
        for (fa_mesh_page_t *rec = _fa_mesh_pages[bin], *after; rec; rec = after) {
            after = rec->next;
            _fa_mesh_collect(rec);
            if (rec->page->used == 0) {
                _fa_mesh_release(rec);
                released++;
                continue;
            }
            if (give_back)
                return_empty_frames(rec);
            *any = true;
        }
    }
    return released;
}

bool _fa_mesh_reclaim(void)
{
    if (!_fa_mesh_on)
        return false;
    bool any = false;
    fa_mutex_lock(&_fa_mesh_lock);
    size_t released = collect_all(false, &any);
    fa_mutex_unlock(&_fa_mesh_lock);
    return released > 0;
}

/* The time to the next pass: the period, or longer while the mesher's CPU is spent. */
static uint64_t pause_ms(void)
{
    uint64_t period = (uint64_t)fa_option(mesh_period), wait = (uint64_t)_fa_mesh_budget_wait_ms();
    return wait > period ? wait : period;
}

void _fa_mesh_pass(uint64_t now, bool force, long *next)
{
    if (!_fa_mesh_on)
        return;
    if (!force && now < next_pass) {
        fa_purge_note_due(next, next_pass, now);
        return;
    }
    /* A pass the program asks for (fa_collect) is not refused for the budget. */
    if (!force && !_fa_mesh_budget_pass_start()) {
        next_pass = now + pause_ms();
        fa_purge_note_due(next, next_pass, now);
        return;
    }
    _fa_mesh_detach_pooled();
    fa_mutex_lock(&_fa_mesh_lock);
    bool any = false, afford = true;
    collect_all(true, &any);
    size_t budget = FA_MESH_MERGES_PER_PASS;
    if (any && merging_ready()) {
        for (size_t bin = 0; bin < FA_SMALL_BINS && budget; bin++) {
            fa_mesh_page_t *list = _fa_mesh_pages[bin];
            bool changed = false;
            for (fa_mesh_page_t *rec = list; rec && !changed; rec = rec->next)
                changed = rec->changed;
            if (!changed || !list->next)
                continue;
            if (!force && !(afford = _fa_mesh_budget_left()))
                break;
            for (size_t k = 0; k < FA_MESH_FRAMES && budget; k++)
                budget -= mesh_frames(list, k, budget);
            batch_run();
            /* Done with the class (a pass cut short by its budget goes on where it was). */
            for (fa_mesh_page_t *rec = list; rec && budget; rec = rec->next)
                rec->changed = false;
        }
    }
    fa_mutex_unlock(&_fa_mesh_lock);
    /* Only the purge thread's passes are charged: the budget's state is that thread's alone. */
    if (!force)
        _fa_mesh_budget_pass_end();
    /* A pass that made its most merges has more to do: the next one comes at once, unless the
     * mesher's CPU is spent (mesh_budget.c). */
    next_pass = budget || !afford ? now + pause_ms() : now + 1;
    if (any)
        fa_purge_note_due(next, next_pass, now);
}

/* ---- fork ---- */

static int copy_file = -1; /* the file the child maps, made before the fork */
static char *copy_window;
/* Whether the parent's meshed pages were frozen while copied (platform/freeze.c). */
static bool copy_frozen;

/* Every detached page with a shared frame. */
#define FOR_SHARING_PAGES(rec)                                                                     \
    for (size_t bin_ = 0; bin_ < FA_SMALL_BINS; bin_++)                                            \
        for (fa_mesh_page_t *rec = _fa_mesh_pages[bin_]; rec; rec = rec->next)                     \
            if (rec->shared)

/* A page's frames, shared or not, frozen or writable again: one call a page rather than one a
 * frame (a fork may have tens of thousands of shared frames). */
static void freeze_page(const fa_mesh_page_t *rec, bool on)
{
    void *start = (void *)rec->page->start;
    size_t size = fa_mesh_frame_count(rec->page) * FA_MESH_FRAME;
    if (!(on ? _fa_os_freeze(start, size) : _fa_os_thaw(start, size)))
        _fa_fatal("fitalloc: fork: meshing could not freeze %p\n", start);
}

/* Each run of a page's shared frames (one mapping or several) in one call; false if one
 * failed. */
static bool shared_runs_dont_fork(const fa_mesh_page_t *rec)
{
    bool ok = true;
    for (size_t k = 0; k < FA_MESH_FRAMES;) {
        size_t run = 0;
        while (k + run < FA_MESH_FRAMES && rec->frames[k + run].group)
            run++;
        if (run)
            ok &= _fa_os_dont_fork((void *)fa_mesh_frame_address(&rec->frames[k]),
                                   run * FA_MESH_FRAME);
        k += run + 1;
    }
    return ok;
}

static void freeze_sharing_pages(bool on)
{
    FOR_SHARING_PAGES(rec)
    freeze_page(rec, on);
}

void _fa_mesh_before_fork(void)
{
    _fa_mesh_fork_prepare();
    if (!shared_frames)
        return;
    copy_file = _fa_os_shared_create(FA_MESH_FILE_SIZE);
    copy_window = copy_file >= 0 ? _fa_os_shared_window(copy_file, FA_MESH_FILE_SIZE) : NULL;
    if (!copy_window)
        _fa_fatal("fitalloc: fork: no memory file for the child's meshed pages\n");
    /* Frozen while copied, so that no thread's write is half in the copy: unless no other
     * thread can write (fork's own thread is here, and the purge thread waits for the mesher's
     * lock, which we hold), or the process cannot freeze (a fork child that inherited meshed
     * pages but may not open a userfaultfd): its copy is then taken frame by frame while other
     * threads may write, as the kernel copies page by page (a block written during the fork
     * may reach the child half written). Never read-only instead: a system call writing into
     * a block would fail with EFAULT, and a thread blocking SIGSEGV would die. */
    copy_frozen = _fa_os_thread_count() != 1 + _fa_purge_threads() && _fa_os_freeze_ready(NULL);
    if (copy_frozen)
        freeze_sharing_pages(true);
    /* Every group's page once, through its first member. */
    FOR_SHARING_PAGES(rec)
    for (size_t k = 0; k < FA_MESH_FRAMES; k++) {
        fa_mesh_group_t *g = rec->frames[k].group;
        if (g && g->first == &rec->frames[k])
            memcpy(copy_window + g->offset, window + g->offset, FA_MESH_FRAME);
    }
    /* The child inherits no shared frame (holes it maps onto the copy when it needs them):
     * the kernel copies fewer mappings, and the child unmaps fewer when it ends. Once a page;
     * again after one of its frames is mapped anew. */
    FOR_SHARING_PAGES(rec)
    if (!rec->dont_fork)
        rec->dont_fork = shared_runs_dont_fork(rec);
}

void _fa_mesh_after_fork_parent(void)
{
    if (copy_window) {
        if (copy_frozen)
            freeze_sharing_pages(false);
        _fa_os_unmap(copy_window, FA_MESH_FILE_SIZE);
        _fa_os_close(copy_file);
        copy_window = NULL;
        copy_file = -1;
    }
    _fa_mesh_fork_parent();
}

/* The child maps each page's shared frames (not inherited: holes) onto its file (the copy), a
 * run of neighbouring frames on neighbouring file pages in one call. */
static void child_map_page(fa_mesh_page_t *rec)
{
    rec->dont_fork = false;
    for (size_t k = 0; k < FA_MESH_FRAMES;) {
        const fa_mesh_group_t *g = rec->frames[k].group;
        if (!g) {
            k++;
            continue;
        }
        size_t run = 1;
        while (k + run < FA_MESH_FRAMES && rec->frames[k + run].group &&
               rec->frames[k + run].group->offset == g->offset + run * FA_MESH_FRAME)
            run++;
        if (!_fa_os_map_shared_at((void *)fa_mesh_frame_address(&rec->frames[k]),
                                  run * FA_MESH_FRAME, file, g->offset))
            _fa_fatal("fitalloc: fork: the child could not map its meshed pages\n");
        k += run;
    }
}

void _fa_mesh_after_fork_child(void)
{
    if (copy_window) {
        /* The copy is the child's file from now on. */
        _fa_os_unmap(window, FA_MESH_FILE_SIZE);
        _fa_os_close(file);
        window = copy_window;
        file = copy_file;
        copy_window = NULL;
        copy_file = -1;
        /* The shared frames are holes here (or, where the kernel ignored MADV_DONTFORK, the
         * parent's mappings): all mapped onto the copy now. The pages' other frames are the
         * child's private copies already. */
        FOR_SHARING_PAGES(rec)
        child_map_page(rec);
    }
    if (_fa_mesh_on) {
        _fa_os_freeze_after_fork_child();
        /* The child's mappings carry no registration of the parent's userfaultfd. */
        for (size_t bin = 0; bin < FA_SMALL_BINS; bin++)
            for (fa_mesh_page_t *rec = _fa_mesh_pages[bin]; rec; rec = rec->next)
                rec->prepared = 0;
    }
    _fa_mesh_fork_child();
}

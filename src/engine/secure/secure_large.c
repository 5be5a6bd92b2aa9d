/* Secure mode's large blocks: a mapping each, between guard pages, with a canary after the
 * block; freed mappings retired inaccessible for a while (secure.c describes the mode). */
#include <errno.h>
#include <string.h>

#include "engine/secure/secure.h"
#include "profile/profile.h"
#include "platform/atomic.h"

/* ---- large blocks ----
 *
 *   | header | guard | block (n bytes) | canary | guard | (slack) |
 *   seg      page    large_block                page         seg + mapped
 *
 * The block starts on the page after its front guard: an underflow faults at its first byte.
 * Its end is followed by the canary (up to FA_LARGE_CANARY bytes, as far as the next page
 * boundary), then a guard page: an overflow faults when it leaves the block's last page, and
 * free sees one that stayed inside it. */

/* Freed large mappings stay reserved for a while, their start inaccessible: a read or write
 * after free there faults, and the address does not come back at once (the newest retired
 * mapping is never taken; skipping more of them faults more pages in again). Their memory is
 * kept for reuse while the kept bytes stay within the default mode's budget for its cache
 * (_fa_large_budget), else emptied. mprotect costs in proportion to the pages a range holds
 * (made inaccessible as a whole, blocks from 128 KiB on cost the bench's case `large` 3.2 times
 * its CPU time), so a kept mapping is made inaccessible only up to FA_LARGE_PROTECT_SPAN bytes
 * into its block (where writes after free land mostly), an emptied one (which holds no pages)
 * as a whole; its guard pages stay as they are. */
#define FA_LARGE_QUARANTINE 16
#define FA_LARGE_RECENT 1
#define FA_LARGE_PROTECT_SPAN ((size_t)64 << 10)
static struct {
    void *base;
    size_t size;
    size_t protected; /* bytes from base made inaccessible */
    uintptr_t block;  /* the block it held (the header cannot be read while protected) */
    size_t usable;    /* its size (where its tail guard begins; for a report) */
    bool emptied;
} retired[FA_LARGE_QUARANTINE] FA_BSS_APART;
static size_t retired_next; /* the oldest entry; the ring's next slot */
static size_t kept_bytes;   /* memory still held by retired mappings that were not emptied */

/* A retired mapping for `size` bytes, made accessible again and fitted (as the default mode's
 * cache does: the smallest one large enough, else the largest, grown); NULL if none. */
static fa_segment_t *take(size_t size, size_t align, bool *zeroed)
{
    size_t pick = FA_LARGE_QUARANTINE;
    fa_mutex_lock(&_fa_global_lock);
    for (size_t k = 0; k + FA_LARGE_RECENT < FA_LARGE_QUARANTINE; k++) {
        size_t i = (retired_next + k) % FA_LARGE_QUARANTINE;
        size_t cand = retired[i].size;
        /* Growing would move a mapping aligned beyond a segment off its alignment. */
        if (!retired[i].base || (uintptr_t)retired[i].base % align ||
            (align > FA_SEG_SIZE && cand < size))
            continue;
        if (pick == FA_LARGE_QUARANTINE) {
            pick = i;
            continue;
        }
        size_t have = retired[pick].size;
        if (have >= size ? (cand >= size && cand < have) : cand > have)
            pick = i;
    }
    fa_segment_t *seg = NULL;
    size_t mapped = 0, protected = 0, usable = 0;
    uintptr_t block = 0;
    if (pick < FA_LARGE_QUARANTINE) {
        seg = retired[pick].base;
        mapped = retired[pick].size;
        protected = retired[pick].protected;
        block = retired[pick].block;
        usable = retired[pick].usable;
        *zeroed = retired[pick].emptied;
        if (!retired[pick].emptied)
            kept_bytes -= mapped;
        retired[pick].base = NULL;
    }
    fa_mutex_unlock(&_fa_global_lock);
    if (!seg)
        return NULL;
    /* Accessible again: the protected start, and the old block's tail guard (the mapping may
     * be fitted to another size; _fa_secure_large_alloc sets the guards of the new block). */
    _fa_os_unprotect(seg, protected);
    uintptr_t tail = fa_align_up(block + usable, FA_OS_PAGE);
    if (tail >= (uintptr_t)seg + protected && tail < (uintptr_t)seg + mapped)
        _fa_os_unprotect((void *)tail, FA_OS_PAGE);
    seg->mapped = mapped;
    seg->large_slack = 0;
    seg->large_block = block;
    return _fa_large_fit_mapping(seg, size);
}

void _fa_secure_large_retire(fa_segment_t *seg)
{
    void *base = seg;
    size_t size = seg->mapped;
    uintptr_t block = seg->large_block; /* the header cannot be read once it is protected */
    size_t usable = seg->large_usable;
    fa_mutex_lock(&_fa_global_lock);
    bool empty = kept_bytes + size > _fa_large_budget();
    if (!empty)
        kept_bytes += size;
    fa_mutex_unlock(&_fa_global_lock);
    /* Inaccessible before it joins the ring, where another thread may take it at once. */
    size_t protected = size;
    if (empty)
        _fa_os_purge(base, size);
    else if (block - (uintptr_t)base + FA_LARGE_PROTECT_SPAN < size)
    protected = fa_align_up(block - (uintptr_t)base + FA_LARGE_PROTECT_SPAN, FA_OS_PAGE);
    _fa_os_protect(base, protected);
    fa_mutex_lock(&_fa_global_lock);
    size_t i = retired_next++ % FA_LARGE_QUARANTINE;
    void *old = retired[i].base;
    size_t old_size = retired[i].size;
    if (old && !retired[i].emptied)
        kept_bytes -= old_size;
    retired[i].base = base;
    retired[i].size = size;
    retired[i].protected = protected;
    retired[i].block = block;
    retired[i].usable = usable;
    retired[i].emptied = empty;
    fa_mutex_unlock(&_fa_global_lock);
    if (old)
        _fa_large_unmap(old, old_size);
}

/* A large block's canary after it: an overflow is contiguous, so it crosses these bytes
 * first, up to the tail guard. */
#define FA_LARGE_CANARY 64

static size_t large_canary(const fa_segment_t *seg, size_t n)
{
    uintptr_t end = seg->large_block + n;
    size_t room = fa_align_up(end, FA_OS_PAGE) - end;
    return room < FA_LARGE_CANARY ? room : FA_LARGE_CANARY;
}

/* The front guard: the pages between the header's and the block. */
static void front_guard(const fa_segment_t *seg, uintptr_t *from, size_t *len)
{
    *from = fa_align_up((uintptr_t)seg + FA_LARGE_HEADER, FA_OS_PAGE);
    *len = seg->large_block - *from;
}

/* The tail guard: the page after the block's last one (the mapping always has it). The slack
 * of a reused bigger mapping after it stays accessible: protecting its resident pages again
 * at each reuse cost the bench's case large twice its CPU time. */
static void tail_guard(const fa_segment_t *seg, size_t n, uintptr_t *from, size_t *len)
{
    *from = fa_align_up(seg->large_block + n, FA_OS_PAGE);
    *len = FA_OS_PAGE;
}

/* The canary after the block and its tail guard; its front guard too if `front`. */
static void set_guards(fa_segment_t *seg, size_t n, bool front)
{
    uintptr_t from;
    size_t len;
    _fa_secure_canary_set((void *)(seg->large_block + n), large_canary(seg, n));
    if (!_fa_secure_guards)
        return;
    if (front) {
        front_guard(seg, &from, &len);
        _fa_os_protect((void *)from, len);
    }
    tail_guard(seg, n, &from, &len);
    _fa_os_protect((void *)from, len);
}

void *_fa_secure_large_alloc(size_t n, size_t alignment, bool zero)
{
    if (alignment < FA_ALIGN)
        alignment = FA_ALIGN;
    size_t offset = fa_align_up(fa_align_up(FA_LARGE_HEADER, FA_OS_PAGE) + FA_OS_PAGE, alignment);
    bool shiftable = alignment <= FA_OS_PAGE;
    size_t size = _fa_large_mapping_size(n, offset, (shiftable ? FA_OS_PAGE : 0) + FA_OS_PAGE);
    if (!size)
        return NULL;
    size_t base_align = alignment > FA_SEG_SIZE ? alignment : FA_SEG_SIZE;
    bool whole = _fa_large_learn();
    bool zeroed = false;
    fa_segment_t *seg = take(size, base_align, &zeroed);
    size_t dirty = seg && !zeroed ? SIZE_MAX : 0; /* a new mapping's pages are fresh */
    bool populate = whole && (dirty || !_fa_large_probe());
    if (!seg)
        seg = _fa_large_map_new(size, base_align);
    if (!seg) {
        errno = ENOMEM;
        return NULL;
    }
    if (shiftable && seg->large_block == (uintptr_t)seg + offset)
        offset += FA_OS_PAGE;
    seg->by_mode = true;
    /* Cleared whole: a retired mapping's old data may lie anywhere in it. */
    void *p = _fa_large_place(seg, n, offset, n, dirty, zero, true, populate);
    set_guards(seg, n, true);
    /* The heap profiler counts it here; a malloc of the size classes' sizes that the trailer
     * makes large is counted as the core's slow page's mallocs are (profile_pages.c), an aligned
     * one by secure_aligned. */
    if (n > FA_CLASS_MAX)
        fa_profile_count(p, n);
    return p;
}

/* A large block grown within its mapping (a buffer grown step by step: the mapping keeps an
 * eighth of headroom when it grows): only its tail guard moves, and not at all while the
 * block's end stays in the same page. Resizing the mapping to fit each time, as below, gave
 * the headroom back at one step and grew the mapping again at the next, three system calls
 * and more for every step of a growing buffer (docs/security.md, large blocks' guards). */
static void grow_within(fa_segment_t *seg, size_t n)
{
    uintptr_t old_tail, new_tail;
    size_t len;
    tail_guard(seg, seg->large_usable, &old_tail, &len);
    tail_guard(seg, n, &new_tail, &len);
    if (new_tail != old_tail && _fa_secure_guards) {
        _fa_os_unprotect((void *)old_tail, len);
        _fa_os_protect((void *)new_tail, len);
    }
    fa_count(large_in_use, n - seg->large_usable);
    seg->large_usable = n;
    _fa_secure_canary_set((void *)(seg->large_block + n), large_canary(seg, n));
}

/* realloc of a large block: its tail guard joins the mapping again, the mapping is resized as
 * in the default mode, with room for a guard page after the new size, and the guards are set
 * again. mremap moves or grows one kernel mapping at a time: the front guard joins it too when
 * the block outgrows the mapping. */
void *_fa_secure_large_realloc(fa_segment_t *seg, size_t n)
{
    uintptr_t front, tail;
    size_t front_len, tail_len;
    if (n > PTRDIFF_MAX - FA_OS_PAGE)
        return NULL;
    bool grows = seg->large_block + n + FA_OS_PAGE > (uintptr_t)seg + seg->mapped;
    /* Within the headroom a growth leaves; a mapping much larger than the block (a retired
     * one taken again, resident past the block) is fitted below instead, its tail given back. */
    size_t need = seg->large_block - (uintptr_t)seg + n + FA_OS_PAGE;
    if (!grows && n >= seg->large_usable && !seg->watched &&
        seg->mapped - need <= need / 8 + FA_OS_PAGE) {
        grow_within(seg, n);
        return (void *)seg->large_block;
    }
    front_guard(seg, &front, &front_len);
    tail_guard(seg, seg->large_usable, &tail, &tail_len);
    if (grows)
        _fa_os_unprotect((void *)front, front_len);
    _fa_os_unprotect((void *)tail, tail_len);
    void *q = _fa_large_realloc(seg, n + FA_OS_PAGE);
    if (!q) {
        set_guards(seg, seg->large_usable, grows);
        return NULL;
    }
    seg = _fa_large_header((uintptr_t)q);
    fa_count(large_in_use, n - seg->large_usable);
    seg->large_usable = n;
    set_guards(seg, n, grows);
    return q;
}

void _fa_secure_large_check(fa_segment_t *seg, const char *caller, size_t size)
{
    size_t n = seg->large_usable;
    void *p = (void *)seg->large_block;
    if (!_fa_secure_canary_intact((const uint8_t *)p + n, large_canary(seg, n)))
        _fa_fatal("fitalloc: %s(): heap overflow of the %zu-byte block at %p\n", caller, n, p);
    if (size && size != n)
        _fa_fatal("fitalloc: %s(): size mismatch: %zu bytes given for the %zu-byte block at %p\n",
                  caller, size, n, p);
}

/* In the SIGSEGV handler (secure_guard.c): an access to a retired mapping, or to a live large
 * block's guards, is reported. The ring is read without the lock: a report is all that
 * follows, and a mapping is retired before it is named there. */
void _fa_secure_large_fault(uintptr_t a)
{
    for (size_t i = 0; i < FA_LARGE_QUARANTINE; i++) {
        uintptr_t base = (uintptr_t)fa_atomic_load_relaxed(&retired[i].base);
        if (base && a - base < retired[i].size)
            _fa_fatal("fitalloc: read or write after free at %p, in the freed %zu-byte block at "
                      "%p\n",
                      (void *)a, retired[i].usable, (void *)retired[i].block);
    }
    size_t chunk = a >> FA_SEG_SHIFT;
    if (chunk >= FA_SEGMAP_SIZE)
        return;
    fa_map_entry_t entry = fa_atomic_load_acquire(&_fa_segmap[chunk]);
    if (!fa_map_is_segment(entry))
        return;
    fa_segment_t *seg = (fa_segment_t *)(a & ~FA_SEG_MASK);
    if (seg->kind != FA_SEG_LARGE || !seg->by_mode || !seg->large_block)
        return;
    uintptr_t from;
    size_t len, n = seg->large_usable;
    front_guard(seg, &from, &len);
    if (a - from < len)
        _fa_fatal("fitalloc: heap underflow into the guard page at %p, before the %zu-byte block "
                  "at %p\n",
                  (void *)a, n, (void *)seg->large_block);
    tail_guard(seg, n, &from, &len);
    if (a - from < len)
        _fa_fatal("fitalloc: heap overflow into the guard page at %p, after the %zu-byte block at "
                  "%p\n",
                  (void *)a, n, (void *)seg->large_block);
}

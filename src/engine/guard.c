/* The first big blocks a program frees (the classes above 128 KiB, which share 2 MiB pages) are
 * kept inaccessible for a while, as glibc's are: it serves its first blocks of 128 KiB and more
 * with a mapping each and unmaps them at free, so that a write after free or a read of the old
 * contents faults; once the program has freed such a block, glibc raises its threshold above
 * that size and serves the next ones from its heap, where neither faults. Here the last
 * FA_GUARD_SLOTS blocks freed are held inaccessible (none of them on a free list: their first
 * words cannot be written), the oldest going to its free list when another comes, until
 * FA_GUARD_BUDGET blocks have been held; then the held ones are freed and the check stops, so
 * that a program cycling big blocks pays two or three system calls a free only for its first
 * ones.
 * A second free (or a realloc) of a held block is reported as a double free. The held blocks
 * go once no big block has been freed for FITALLOC_PURGE_DELAY (seen by a thread's slow path,
 * as idle pages are: heap.c), or at fa_collect, so that their pages can be given back.
 *
 * Until then, big pages' frees leave the inline fast path (their thread word is 0: engine.h),
 * so that a free of the page's owner reaches free_in_page (free.c), which hands the block here;
 * afterwards the owner's next free of each page gives it its thread word back, and its frees
 * are inline again. */
#include "engine/free_list.h"
#include "common/options.h"
#include "platform/atomic.h"

/* Each block held costs two system calls; the last FA_GUARD_SLOTS a third, and, when they are
 * written again, a page fault per page. */
#define FA_GUARD_SLOTS 4
#define FA_GUARD_BUDGET 16

/* Changed under _fa_global_lock; the slots are also read atomically without it, by the check
 * of a free (the statistics and the heap visit hold the lock). */
static struct {
    fa_block_t *block[FA_GUARD_SLOTS];
    fa_page_t *page[FA_GUARD_SLOTS];
    size_t next;  /* the slot the next block takes: the oldest block's once all are taken */
    size_t taken; /* blocks held so far, up to FA_GUARD_BUDGET */
} guard;
static size_t held;
static uint64_t last_held_at; /* ms */

/* Hold p (unless NULL) and let the oldest block go, or, with `all` (the budget spent, or
 * fa_collect), let every block go. Whether p is held. */
static bool hold(fa_page_t *page, void *p, bool all)
{
    fa_page_t *out_page[FA_GUARD_SLOTS];
    fa_block_t *out[FA_GUARD_SLOTS];
    size_t count = 0;
    fa_mutex_lock(&_fa_global_lock);
    bool kept = p && guard.taken < FA_GUARD_BUDGET;
    if (p && !kept) {
        all = true;
        fa_atomic_store_relaxed(&_fa_guard_spent, true);
    }
    for (size_t i = 0; i < (all ? FA_GUARD_SLOTS : 1); i++) {
        size_t slot = (guard.next + i) % FA_GUARD_SLOTS;
        if (guard.block[slot]) {
            out[count] = guard.block[slot];
            out_page[count++] = guard.page[slot];
            fa_atomic_store_relaxed(&guard.block[slot], NULL);
        }
    }
    if (kept) {
        /* Inaccessible before it is held: another thread's double free then finds it held.
         * The last FA_GUARD_SLOTS blocks give their memory back too, as glibc's unmapped
         * block's: no later block lets them go, so they stay held while the program makes new
         * blocks elsewhere, and resident they added to the peak. An earlier block goes within
         * FA_GUARD_SLOTS frees; given back, it only faulted in again when reused. */
        _fa_os_protect(p, page->block_size);
        if (guard.taken >= FA_GUARD_BUDGET - FA_GUARD_SLOTS)
            _fa_os_purge(p, page->block_size);
        fa_atomic_store_relaxed(&guard.page[guard.next], page);
        fa_atomic_store_release(&guard.block[guard.next], (fa_block_t *)p);
        guard.next = (guard.next + 1) % FA_GUARD_SLOTS;
        guard.taken++;
        fa_atomic_store_relaxed(&last_held_at, _fa_os_now_ms());
    }
    fa_atomic_store_relaxed(&held, held + kept - count);
    fa_mutex_unlock(&_fa_global_lock);
    for (size_t i = 0; i < count; i++) {
        _fa_os_unprotect(out[i], out_page[i]->block_size);
        _fa_free_block(out_page[i], out[i]);
    }
    return kept;
}

bool _fa_guard_free(fa_page_t *page, void *p)
{
    if (page->bin < FA_MEDIUM_BINS)
        return false;
    if (!fa_atomic_load_relaxed(&_fa_guard_spent))
        return hold(page, p, false);
    /* Done: the owner gives the page its thread word back (only the owner writes it), and the
     * page's next frees are inline again. A full page gets it when it leaves the full list. */
    fa_heap_t *heap = _fa_heap_tls;
    uintptr_t owner = fa_atomic_load_relaxed(&page->owner);
    if (fa_owner_heap(owner) == heap && !(owner & FA_OWNER_FULL))
        fa_page_set_thread(page, heap->thread);
    return false;
}

void _fa_guard_flush(void)
{
    if (fa_atomic_load_relaxed(&held))
        hold(NULL, NULL, true);
}

void _fa_guard_expire(uint64_t now)
{
    if (fa_atomic_load_relaxed(&held) &&
        now >= fa_atomic_load_relaxed(&last_held_at) + (uint64_t)fa_option(purge_delay))
        hold(NULL, NULL, true);
}

bool _fa_guard_holds(const void *p)
{
    if (!fa_atomic_load_relaxed(&held))
        return false;
    bool found = false;
    for (size_t i = 0; i < FA_GUARD_SLOTS; i++)
        found |= fa_atomic_load_relaxed(&guard.block[i]) == p;
    return found;
}

size_t _fa_guard_held_in(const fa_page_t *page)
{
    size_t count = 0;
    for (size_t i = 0; i < FA_GUARD_SLOTS && fa_atomic_load_relaxed(&held); i++)
        count += fa_atomic_load_acquire(&guard.block[i]) &&
                 fa_atomic_load_relaxed(&guard.page[i]) == page;
    return count;
}

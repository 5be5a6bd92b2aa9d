/* Lock mode "arenas", the ptmalloc scheme: N heaps (arenas), each behind its own lock.
 *
 * A new thread starts at the next arena in turn; afterwards it allocates from the arena it used
 * last. When that arena is locked (a trylock fails) it moves on to the next one, and so on
 * around the ring; only when every arena is taken does it wait, for its own. An arena that is
 * out of memory (FITALLOC_LAB_ARENA) hands the request to the others. A block always goes back
 * to the arena it came from, found by its address, under that arena's lock: threads free into
 * each other's arenas freely, at the price of sharing their locks.
 */
#include "lab/threads/lab_instance.h"
#include "platform/atomic.h"

static void *from_arena(struct fa_lab *lab, unsigned i, size_t alignment, size_t n)
{
    fa_classic_heap *h = _fa_lab_slot_open(lab, i);
    return h ? fa_lab_heap_alloc(h, alignment, n) : NULL;
}

static void *arenas_alloc(struct fa_lab *lab, size_t alignment, size_t n)
{
    /* The thread's slot is used by name, not through a pointer: UBSan in gcc 12 reports
     * the address of an initial-exec TLS variable as a null pointer here. */
    if (_fa_lab_tls.lab_id != lab->id) {
        _fa_lab_tls.lab_id = lab->id;
        _fa_lab_tls.heap = NULL;
        _fa_lab_tls.arena = fa_atomic_fetch_add_relaxed(&lab->next_arena, 1) % lab->slots;
    }
    unsigned first = _fa_lab_tls.arena, i = first, missed = 0;
    while (!fa_lab_trylock(&lab->slot[i].lock)) {
        missed++;
        i = i + 1 == lab->slots ? 0 : i + 1;
        if (i == first) {
            fa_lab_lock(&lab->slot[i].lock);
            break;
        }
    }
    /* Attempts that found an arena taken, counted under the lock we got. */
    lab->slot[i].lock.contended += missed;
    _fa_lab_tls.arena = i;
    void *p = from_arena(lab, i, alignment, n);
    fa_lab_unlock(&lab->slot[i].lock);
    for (unsigned k = 1; !p && k < lab->slots; k++) {
        unsigned j = (i + k) % lab->slots;
        fa_lab_lock(&lab->slot[j].lock);
        p = from_arena(lab, j, alignment, n);
        fa_lab_unlock(&lab->slot[j].lock);
        if (p)
            _fa_lab_tls.arena = j;
    }
    return p;
}

const struct fa_lab_lock_ops _fa_lock_arenas_ops = {
    .name = "arenas",
    .alloc = arenas_alloc,
    FA_LOCK_SLOTS_OPS,
};

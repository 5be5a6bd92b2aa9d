/* What the global and arenas lock modes share: a block always goes back to the heap of its
 * slot, under that slot's lock. */
#include "lab/threads/lab_instance.h"
#include "platform/atomic.h"

void _fa_lock_slot_free(struct fa_lab *lab, unsigned slot, void *p, const char *caller)
{
    fa_lab_lock_t *lock = &lab->slot[slot].lock;
    fa_lab_lock(lock);
    _fa_classic_heap_free(fa_lab_slot_heap(lab, slot), p, caller);
    fa_lab_unlock(lock);
}

bool _fa_lock_slot_resize(struct fa_lab *lab, unsigned slot, void *p, size_t n)
{
    fa_lab_lock_t *lock = &lab->slot[slot].lock;
    fa_lab_lock(lock);
    bool done = _fa_classic_heap_resize(fa_lab_slot_heap(lab, slot), p, n);
    fa_lab_unlock(lock);
    return done;
}

void _fa_lock_slots_visit(struct fa_lab *lab,
                          void (*fn)(fa_classic_heap *h, bool exclusive, fa_lab_lock_t *lock,
                                     void *arg),
                          void *arg)
{
    for (unsigned i = 0; i < lab->slots; i++) {
        fa_lab_lock_t *lock = &lab->slot[i].lock;
        if (!fa_atomic_load_acquire(&lab->slot[i].heap))
            continue;
        fa_lab_lock(lock);
        lock->acquisitions--; /* looking is not using: keep the statistics the program's */
        fn(fa_lab_slot_heap(lab, i), true, lock, arg);
        fa_lab_unlock(lock);
    }
}

void _fa_lock_slots_fork_prepare(struct fa_lab *lab)
{
    for (unsigned i = 0; i < lab->slots; i++) {
        fa_lab_lock(&lab->slot[i].lock);
        lab->slot[i].lock.acquisitions--;
    }
}

void _fa_lock_slots_fork_parent(struct fa_lab *lab)
{
    for (unsigned i = 0; i < lab->slots; i++)
        fa_lab_unlock(&lab->slot[i].lock);
}

void _fa_lock_slots_fork_child(struct fa_lab *lab)
{
    for (unsigned i = 0; i < lab->slots; i++)
        fa_lab_lock_reset(&lab->slot[i].lock);
}

void _fa_lock_none_thread_exit(struct fa_lab *lab)
{
    (void)lab;
}

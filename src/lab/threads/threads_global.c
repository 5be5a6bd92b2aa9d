/* Lock mode "global": one heap behind one futex mutex (lab_mutex.h). Every malloc and free of
 * every thread takes the same lock: uncontended that is one compare-and-swap and one exchange
 * per call; under contention a thread spins with backoff (lock.c), then sleeps in the kernel. */
#include "lab/threads/lab_instance.h"

static void *global_alloc(struct fa_lab *lab, size_t alignment, size_t n)
{
    fa_lab_lock_t *lock = &lab->slot[0].lock;
    fa_lab_lock(lock);
    fa_classic_heap *h = _fa_lab_slot_open(lab, 0);
    void *p = h ? fa_lab_heap_alloc(h, alignment, n) : NULL;
    fa_lab_unlock(lock);
    return p;
}

const struct fa_lab_lock_ops _fa_lock_global_ops = {
    .name = "global",
    .alloc = global_alloc,
    FA_LOCK_SLOTS_OPS,
};

/* Lock mode "thread": a heap per thread, and no lock on the allocating path.
 *
 * A thread's first allocation gives it a heap: one left by an exited thread (the pool), or a
 * new one in the next free slot. From then on it allocates from and frees into its heap with
 * no lock and no atomic read-modify-write. A block freed by another thread goes back to the
 * heap it came from: the freeing thread claims it (one compare-and-swap on its check word,
 * which also catches a double free) and pushes it onto that heap's lock-free remote list; the
 * owner takes the whole list with one exchange at its next allocation and frees the blocks
 * as if they were its own, so they coalesce with their neighbours there. A thread that exits
 * returns its remote blocks and puts its heap in the pool, blocks and all; frees into it keep
 * working, and the next new thread adopts it.
 *
 * Compared with thread-local free lists over one shared break (the ECE650 study's "no lock"
 * version), memory never changes heap: a heap's free space serves only its own thread, so
 * the process needs about one heap's worth of free space per thread (docs/lab.md).
 */
#include "lab/threads/lab_instance.h"

/* Give the calling thread a heap: from the pool, else a fresh slot; NULL when all are taken. */
static fa_classic_heap *adopt(struct fa_lab *lab)
{
    fa_classic_heap *h = NULL;
    fa_mutex_lock(&lab->pool_lock);
    if (lab->pool >= 0) {
        struct fa_lab_slot *slot = &lab->slot[lab->pool];
        h = fa_lab_slot_heap(lab, (unsigned)lab->pool);
        lab->pool = slot->pool_next;
        slot->in_pool = false;
    } else if (lab->slots_used < lab->slots) {
        /* A heap that cannot be created says so itself (_fa_lab_slot_open). */
        h = _fa_lab_slot_open(lab, lab->slots_used);
        if (h)
            lab->slots_used++;
    }
    bool warn = !h && lab->slots_used == lab->slots && !lab->warned_full;
    if (warn)
        lab->warned_full = true;
    fa_mutex_unlock(&lab->pool_lock);
    if (warn)
        _fa_message(2,
                    "fitalloc: lab: all %u thread heaps are in use; allocations of new "
                    "threads fail (see docs/lab.md)\n",
                    lab->slots);
    if (h) {
        _fa_lab_tls.lab_id = lab->id;
        _fa_lab_tls.heap = h;
    }
    return h;
}

static inline fa_classic_heap *my_heap(const struct fa_lab *lab)
{
    return _fa_lab_tls.lab_id == lab->id ? _fa_lab_tls.heap : NULL;
}

static void *thread_alloc(struct fa_lab *lab, size_t alignment, size_t n)
{
    fa_classic_heap *h = my_heap(lab);
    if (fa_unlikely(!h) && !(h = adopt(lab)))
        return NULL;
    _fa_classic_heap_drain(h);
    return fa_lab_heap_alloc(h, alignment, n);
}

static void thread_free(struct fa_lab *lab, unsigned slot, void *p, const char *caller)
{
    fa_classic_heap *h = fa_lab_slot_heap(lab, slot);
    if (fa_likely(h == my_heap(lab)))
        _fa_classic_heap_free(h, p, caller);
    else
        _fa_classic_heap_remote_free(h, p, caller);
}

static bool thread_resize(struct fa_lab *lab, unsigned slot, void *p, size_t n)
{
    /* Only the owner may touch its heap; others move the block (lab_instance.c). */
    fa_classic_heap *h = fa_lab_slot_heap(lab, slot);
    return h == my_heap(lab) && _fa_classic_heap_resize(h, p, n);
}

static void thread_exit(struct fa_lab *lab)
{
    fa_classic_heap *h = my_heap(lab);
    if (!h)
        return;
    _fa_classic_heap_drain(h);
    unsigned i = fa_lab_slot_of_heap(lab, h);
    fa_mutex_lock(&lab->pool_lock);
    lab->slot[i].in_pool = true;
    lab->slot[i].pool_next = lab->pool;
    lab->pool = (int)i;
    fa_mutex_unlock(&lab->pool_lock);
    _fa_lab_tls.heap = NULL;
}

/* Pooled heaps and the caller's own are exclusive (the pool lock keeps adopters out while we
 * look); heaps of other live threads only show their counters. */
static void thread_visit(struct fa_lab *lab,
                         void (*fn)(fa_classic_heap *h, bool exclusive, fa_lab_lock_t *lock,
                                    void *arg),
                         void *arg)
{
    fa_classic_heap *mine = my_heap(lab);
    fa_mutex_lock(&lab->pool_lock);
    for (unsigned i = 0; i < lab->slots_used; i++) {
        fa_classic_heap *h = fa_lab_slot_heap(lab, i);
        bool exclusive = h == mine || lab->slot[i].in_pool;
        if (exclusive)
            _fa_classic_heap_drain(h);
        fn(h, exclusive, NULL, arg);
    }
    fa_mutex_unlock(&lab->pool_lock);
}

/* The pool lock is taken by the lab around fork (lab_instance.c); heaps of the threads that do
 * not exist in the child stay where they are, unused (one of them may be half-way through an
 * operation). */
static void thread_fork_nothing(struct fa_lab *lab)
{
    (void)lab;
}

const struct fa_lab_lock_ops _fa_lock_thread_ops = {
    .name = "thread",
    .alloc = thread_alloc,
    .free = thread_free,
    .resize = thread_resize,
    .thread_exit = thread_exit,
    .visit = thread_visit,
    .fork_prepare = thread_fork_nothing,
    .fork_parent = thread_fork_nothing,
    .fork_child = thread_fork_nothing,
};

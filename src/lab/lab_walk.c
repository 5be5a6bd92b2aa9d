/* The walk of a whole lab (fa_lab_walk, fitalloc-lab.h): every heap the lock mode lets us walk
 * now, block by block, then the direct mappings. Nothing here allocates. */
#include "lab/heap/heap_walk.h"
#include "lab/threads/lab_instance.h"

struct lab_walk {
    struct fa_lab *lab;
    fa_lab_walk_fn fn;
    void *arg;
    int heap; /* the slot being walked */
    unsigned heaps;
};

static void report_block(uintptr_t block, size_t size, bool used, void *arg)
{
    struct lab_walk *w = arg;
    struct fa_lab_block b = {
        .heap = w->heap,
        .used = used,
        .start = (void *)block,
        .size = size,
        .payload = fa_block_payload(block),
        .payload_size = fa_block_payload_size(size),
    };
    w->fn(&b, w->arg);
}

/* The lock mode calls this for every heap; only a heap we have to ourselves can be walked (in
 * thread mode, another live thread's heap changes under us without any lock). */
static void walk_heap(fa_classic_heap *h, bool exclusive, fa_lab_lock_t *lock, void *arg)
{
    (void)lock;
    struct lab_walk *w = arg;
    if (!exclusive)
        return;
    w->heap = (int)fa_lab_slot_of_heap(w->lab, h);
    _fa_classic_heap_walk(h, report_block, w);
    w->heaps++;
}

/* Direct mappings: under the registry's lock, so none is unmapped while we report it. */
static void walk_direct(struct fa_lab *lab, fa_lab_walk_fn fn, void *arg)
{
    struct fa_direct_registry *r = &lab->direct;
    fa_mutex_lock(&r->lock);
    for (size_t i = 0; r->table && i < r->capacity; i++) {
        const struct fa_direct_entry *e = &r->table[i];
        if (e->addr <= 1) /* empty or deleted (direct.c) */
            continue;
        struct fa_lab_block b = {
            .heap = -1,
            .used = 1,
            .start = (void *)e->addr,
            .size = e->size,
            .payload = (void *)e->addr,
            .payload_size = e->size,
        };
        fn(&b, arg);
    }
    fa_mutex_unlock(&r->lock);
}

unsigned _fa_lab_instance_walk(struct fa_lab *lab, fa_lab_walk_fn fn, void *arg)
{
    struct lab_walk w = {.lab = lab, .fn = fn, .arg = arg};
    lab->ops->visit(lab, walk_heap, &w);
    walk_direct(lab, fn, arg);
    return w.heaps;
}

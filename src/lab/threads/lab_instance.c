/* A lab (lab_instance.h): its reservation, its slots, and the C semantics of malloc, free and
 * realloc on top of a lock mode. */
#include "lab/threads/lab_instance.h"

#include <errno.h>
#include <string.h>

#include "common/message.h"
#include "trace/record.h"
#include "platform/atomic.h"

__thread struct fa_lab_tls _fa_lab_tls __attribute__((tls_model("initial-exec")));

static uint64_t next_lab_id = 1;

#define GIB ((size_t)1 << 30)
#define TIB ((size_t)1 << 40)
/* A fixed arena's slot: the arena and room for the heap's metadata before it. */
#define ARENA_METADATA ((size_t)64 << 10)

static size_t round_up_pow2(size_t x)
{
    size_t p = FA_OS_PAGE;
    while (p < x)
        p <<= 1;
    return p;
}

static size_t round_down_pow2(size_t x)
{
    size_t p = FA_OS_PAGE;
    while (p <= x / 2)
        p <<= 1;
    return p;
}

static unsigned default_arenas(void)
{
    return 8 * _fa_os_cpu_count();
}

static unsigned slot_count(struct fa_lab_config *cfg)
{
    switch (cfg->lock) {
    case FA_LOCK_THREAD: return cfg->max_heaps ? cfg->max_heaps : 1024;
    case FA_LOCK_ARENAS:
        if (!cfg->arenas)
            cfg->arenas = default_arenas();
        return cfg->arenas;
    default: return 1;
    }
}

/* How many heaps, and how much address space each: a heap can grow to its slot size.
 *   global  1 heap of 1 TiB
 *   arenas  N heaps sharing 4 TiB (at most 1 TiB each)
 *   thread  1024 heaps of 8 GiB (1024 threads at once)
 * With a fixed arena a slot needs only the arena and the metadata. */
static void choose_slots(struct fa_lab_config *cfg, unsigned *slots, size_t *slot_size)
{
    *slots = slot_count(cfg);
    switch (cfg->lock) {
    case FA_LOCK_THREAD: *slot_size = 8 * GIB; break;
    case FA_LOCK_ARENAS:
        *slot_size = round_down_pow2(4 * TIB / *slots);
        if (*slot_size > TIB)
            *slot_size = TIB;
        break;
    default: *slot_size = TIB; break;
    }
    if (cfg->heap.arena)
        *slot_size = round_up_pow2(cfg->heap.arena + ARENA_METADATA);
    if (cfg->slot_size)
        *slot_size = round_up_pow2(cfg->slot_size);
}

size_t _fa_lab_arena_max(const struct fa_lab_config *config)
{
    struct fa_lab_config cfg = *config;
    /* A quarter of the address space: the rest is the program's, its libraries' and the
     * fast engine's. */
    size_t budget = (size_t)1 << (_fa_os_address_bits() - 2);
    size_t slot = round_down_pow2(budget / slot_count(&cfg));
    return slot - ARENA_METADATA;
}

struct fa_lab *_fa_lab_instance_create(const struct fa_lab_config *config)
{
    struct fa_lab_config cfg = *config;
    unsigned slots;
    size_t slot_size;
    choose_slots(&cfg, &slots, &slot_size);
    if (slots == 0 || slots > (1u << 20))
        return NULL;
    /* Address space may be limited (ulimit -v, sanitizers): settle for smaller slots, down
     * to 64 MiB, then (thread mode) for fewer of them, down to 8. */
    size_t smallest = slot_size < ((size_t)64 << 20) ? slot_size : ((size_t)64 << 20);
    void *space = NULL;
    for (;;) {
        if (slot_size <= ((size_t)1 << FA_ADDRESS_BITS) / slots)
            space = _fa_os_reserve(slot_size * slots, slot_size);
        if (space)
            break;
        if (slot_size / 2 >= smallest)
            slot_size /= 2;
        else if (cfg.lock == FA_LOCK_THREAD && slots > 8)
            slots /= 2;
        else
            return NULL;
    }
    size_t mapped =
        fa_align_up(sizeof(struct fa_lab) + slots * sizeof(struct fa_lab_slot), FA_OS_PAGE);
    struct fa_lab *lab = _fa_os_map_aligned(mapped, FA_OS_PAGE);
    if (!lab) {
        _fa_os_unmap(space, slot_size * slots);
        return NULL;
    }
    /* Fresh mappings read as zero: locks unlocked, slots without heaps. */
    lab->cfg = cfg;
    lab->ops = cfg.lock == FA_LOCK_THREAD   ? &_fa_lock_thread_ops
               : cfg.lock == FA_LOCK_ARENAS ? &_fa_lock_arenas_ops
                                            : &_fa_lock_global_ops;
    lab->id = fa_atomic_fetch_add_relaxed(&next_lab_id, 1);
    lab->space = (uintptr_t)space;
    lab->slot_size = slot_size;
    lab->slot_shift = (unsigned)__builtin_ctzll(slot_size);
    lab->slots = slots;
    lab->mapped = mapped;
    lab->pool = -1;
    return lab;
}

void _fa_lab_instance_destroy(struct fa_lab *lab)
{
    _fa_direct_destroy(&lab->direct);
    _fa_os_unmap((void *)lab->space, lab->slot_size * lab->slots);
    _fa_os_unmap(lab, lab->mapped);
}

/* Said once per lab, with the cause: its allocations fail from now on. */
static void warn_no_heap(const struct fa_lab *lab, unsigned i)
{
    size_t arena = lab->cfg.heap.arena;
    if (arena && lab->slot_size < arena + ARENA_METADATA)
        _fa_message(2,
                    "fitalloc: lab: cannot create heap %u: the system reserved %zu bytes of "
                    "address space for it, less than its arena of %zu (ulimit -v?); its "
                    "allocations fail\n",
                    i, lab->slot_size, arena);
    else
        _fa_message(2,
                    "fitalloc: lab: cannot create heap %u: the system refused its memory; its "
                    "allocations fail\n",
                    i);
}

fa_classic_heap *_fa_lab_slot_open(struct fa_lab *lab, unsigned i)
{
    fa_classic_heap *h = fa_atomic_load_acquire(&lab->slot[i].heap);
    if (fa_likely(h != NULL))
        return h;
    h = _fa_classic_heap_create_at(fa_lab_slot_heap(lab, i), lab->slot_size, &lab->cfg.heap);
    /* Release: a thread that sees the pointer (free, owns) sees the heap's fields. */
    if (h)
        fa_atomic_store_release(&lab->slot[i].heap, h);
    else if (!fa_atomic_exchange_relaxed(&lab->warned_heap, true))
        warn_no_heap(lab, i);
    return h;
}

/* The slot of a pointer inside a heap in use; false for anything else. */
static bool slot_of(const struct fa_lab *lab, const void *p, unsigned *slot)
{
    uintptr_t offset = (uintptr_t)p - lab->space;
    if (offset >= ((uintptr_t)lab->slots << lab->slot_shift))
        return false;
    *slot = (unsigned)(offset >> lab->slot_shift);
    return fa_atomic_load_acquire(&lab->slot[*slot].heap) != NULL;
}

static bool goes_direct(const struct fa_lab *lab, size_t n)
{
    return lab->cfg.direct && n >= lab->cfg.direct;
}

void *_fa_lab_instance_alloc(struct fa_lab *lab, size_t alignment, size_t n)
{
    if (alignment <= FA_BLOCK_ALIGN)
        alignment = 0;
    void *p = goes_direct(lab, n) ? _fa_direct_alloc(&lab->direct, alignment, n)
                                  : lab->ops->alloc(lab, alignment, n);
    if (!p)
        errno = ENOMEM;
    return p;
}

void _fa_lab_instance_free(struct fa_lab *lab, void *p, const char *caller)
{
    unsigned slot;
    if (slot_of(lab, p, &slot))
        lab->ops->free(lab, slot, p, caller);
    else if (!_fa_direct_free(&lab->direct, p))
        _fa_invalid_pointer(caller, p);
}

void *_fa_lab_instance_realloc(struct fa_lab *lab, void *p, size_t n)
{
    unsigned slot;
    size_t usable;
    if (slot_of(lab, p, &slot)) {
        if (!goes_direct(lab, n) && lab->ops->resize(lab, slot, p, n))
            return p;
        usable = _fa_classic_heap_usable(fa_lab_slot_heap(lab, slot), p, "realloc");
    } else {
        usable = _fa_direct_usable(&lab->direct, p);
        if (!usable)
            _fa_invalid_pointer("realloc", p);
        if (n <= usable && goes_direct(lab, n))
            return p;
    }
    void *q = _fa_lab_instance_alloc(lab, 0, n);
    if (!q)
        return NULL;
    memcpy(q, p, n < usable ? n : usable);
    /* A traced realloc takes its place in the order before p can go to another thread. */
    if (fa_unlikely(_fa_tracing))
        _fa_trace_point();
    _fa_lab_instance_free(lab, p, "realloc");
    return q;
}

size_t _fa_lab_instance_usable(struct fa_lab *lab, const void *p)
{
    unsigned slot;
    if (slot_of(lab, p, &slot))
        return _fa_classic_heap_usable(fa_lab_slot_heap(lab, slot), p, "malloc_usable_size");
    size_t usable = _fa_direct_usable(&lab->direct, p);
    if (!usable)
        _fa_invalid_pointer("malloc_usable_size", p);
    return usable;
}

bool _fa_lab_instance_owns(struct fa_lab *lab, const void *p)
{
    unsigned slot;
    return slot_of(lab, p, &slot) || _fa_direct_usable(&lab->direct, p) != 0;
}

void _fa_lab_instance_thread_exit(struct fa_lab *lab)
{
    lab->ops->thread_exit(lab);
}

/* Lock order: slot locks (in slot order), then the pool lock, then the direct registry. */
void _fa_lab_instance_fork_prepare(struct fa_lab *lab)
{
    lab->ops->fork_prepare(lab);
    fa_mutex_lock(&lab->pool_lock);
    fa_mutex_lock(&lab->direct.lock);
}

void _fa_lab_instance_fork_parent(struct fa_lab *lab)
{
    fa_mutex_unlock(&lab->direct.lock);
    fa_mutex_unlock(&lab->pool_lock);
    lab->ops->fork_parent(lab);
}

void _fa_lab_instance_fork_child(struct fa_lab *lab)
{
    fa_mutex_reset(&lab->direct.lock);
    fa_mutex_reset(&lab->pool_lock);
    lab->ops->fork_child(lab);
}

static void check_heap(fa_classic_heap *h, bool exclusive, fa_lab_lock_t *lock, void *arg)
{
    (void)lock;
    if (exclusive) {
        _fa_classic_heap_check(h);
        ++*(unsigned *)arg;
    }
}

unsigned _fa_lab_instance_check(struct fa_lab *lab)
{
    unsigned checked = 0;
    lab->ops->visit(lab, check_heap, &checked);
    return checked;
}

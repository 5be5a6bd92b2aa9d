/* A lab: classic heaps under one thread-safety strategy (a lock mode), plus direct mappings.
 *
 * The process-wide lab of FITALLOC_MODE=lab (lab_api.c) is one of these, configured from the
 * options; tests create their own with an explicit configuration.
 *
 * All heaps live in one reservation cut into equal slots, so the heap of any pointer is found
 * by arithmetic and "is this a lab pointer" is a range check:
 *
 *   space (slots x slot_size, aligned to slot_size)
 *   +----------------------+----------------------+-- ... --+----------------------+
 *   | slot 0: heap 0       | slot 1: heap 1       |         | slot n-1             |
 *   | metadata, blocks ... | metadata, blocks ... |         | (unused until needed)|
 *   +----------------------+----------------------+-- ... --+----------------------+
 *
 * Lock modes (threads_global.c, threads_per_thread.c, threads_arenas.c) decide which heap a thread uses and
 * how it is protected; the heaps and their policy are the same in every mode.
 */
#ifndef FA_LAB_INSTANCE_H
#define FA_LAB_INSTANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fitalloc-lab.h"
#include "common/options.h"
#include "lab/heap/classic_heap.h"
#include "lab/heap/direct.h"
#include "lab/threads/lab_mutex.h"

struct fa_lab_config {
    struct fa_classic_heap_config heap; /* every heap of the lab uses it */
    enum fa_lock_mode lock;
    unsigned arenas;  /* arenas mode: how many heaps (0: 8 per core) */
    size_t direct;    /* requests of at least this many bytes get their own mapping (0: never) */
    size_t slot_size; /* address space per heap, a power of two (0: by mode, see lab_instance.c) */
    unsigned max_heaps; /* thread mode: heaps at most (0: by mode) */
};

struct fa_lab;

/* What a lock mode does; the lab calls it for every operation on a heap. */
struct fa_lab_lock_ops {
    const char *name;
    /* n bytes (alignment > 16, or 0 for the default 16) from a heap of the mode's choosing;
     * NULL when out of memory. */
    void *(*alloc)(struct fa_lab *lab, size_t alignment, size_t n);
    /* Free p, which lies in slot `slot`. */
    void (*free)(struct fa_lab *lab, unsigned slot, void *p, const char *caller);
    /* Resize p (in slot `slot`) in place if possible. */
    bool (*resize)(struct fa_lab *lab, unsigned slot, void *p, size_t n);
    /* The calling thread is exiting. */
    void (*thread_exit)(struct fa_lab *lab);
    /* Call fn for every heap. `exclusive`: fn has the heap to itself and may walk it;
     * otherwise it may only read counters. `lock`: the heap's lock, held during the call
     * (NULL in thread mode). */
    void (*visit)(struct fa_lab *lab,
                  void (*fn)(fa_classic_heap *h, bool exclusive, fa_lab_lock_t *lock, void *arg),
                  void *arg);
    void (*fork_prepare)(struct fa_lab *lab);
    void (*fork_parent)(struct fa_lab *lab);
    void (*fork_child)(struct fa_lab *lab);
};

extern const struct fa_lab_lock_ops _fa_lock_global_ops, _fa_lock_thread_ops, _fa_lock_arenas_ops;

struct fa_lab_slot {
    fa_lab_lock_t lock;    /* global and arenas modes */
    fa_classic_heap *heap; /* created on first use; read atomically (owns() runs unlocked) */
    /* Thread mode, under the lab's pool_lock: the heap's thread exited and it waits for a new
     * one; the pool is a stack of slot numbers (-1 ends it). */
    bool in_pool;
    int pool_next;
} __attribute__((aligned(64))); /* arenas: no false sharing between neighbouring locks */

struct fa_lab {
    struct fa_lab_config cfg;
    const struct fa_lab_lock_ops *ops;
    uint64_t id; /* unique per lab: the thread-local cache below is checked against it */
    uintptr_t space;
    size_t slot_size;
    unsigned slot_shift;
    unsigned slots;
    size_t mapped; /* size of this structure's own mapping */
    struct fa_direct_registry direct;
    /* Thread mode: heaps of exited threads wait here for a new thread. */
    fa_mutex_t pool_lock;
    int pool;            /* first slot of the pool, -1 when empty */
    unsigned slots_used; /* thread mode: slots handed out so far (under pool_lock) */
    unsigned next_arena; /* arenas mode: first arena of the next new thread (atomic) */
    bool warned_full;
    bool warned_heap; /* a heap could not be created: said once */
    struct fa_lab_slot slot[];
};

/* Per thread: the lab it last used, and its heap (thread mode) or arena (arenas mode). One
 * entry only: a thread that alternates between two thread-mode labs takes a new heap each time
 * it comes back (the process has one lab; tests use one at a time). */
struct fa_lab_tls {
    uint64_t lab_id;
    fa_classic_heap *heap;
    unsigned arena;
};
extern __thread struct fa_lab_tls _fa_lab_tls __attribute__((tls_model("initial-exec")));

/* The fixed arenas (cfg.heap.arena) that can work: at least one slab page (the largest unit a
 * layout tiles by), which also holds what a C library allocates before main; at most what lets
 * every heap of the lock mode reserve its slot (_fa_lab_arena_max). At most FA_LAB_ARENAS_MAX
 * arenas: each has at least a 1 GiB slot in the arenas' 4 TiB. */
#define FA_LAB_ARENA_MIN ((size_t)64 << 10)
#define FA_LAB_ARENAS_MAX 4096u
size_t _fa_lab_arena_max(const struct fa_lab_config *cfg);

/* Create a lab (its structure and reservation come from the OS); NULL if it cannot. */
struct fa_lab *_fa_lab_instance_create(const struct fa_lab_config *cfg);
/* Unmap everything (tests: no thread may use the lab any more). */
void _fa_lab_instance_destroy(struct fa_lab *lab);

/* C semantics on top of the lock modes; failures set errno to ENOMEM. */
void *_fa_lab_instance_alloc(struct fa_lab *lab, size_t alignment, size_t n);
void _fa_lab_instance_free(struct fa_lab *lab, void *p, const char *caller);
void *_fa_lab_instance_realloc(struct fa_lab *lab, void *p, size_t n);
size_t _fa_lab_instance_usable(struct fa_lab *lab, const void *p);
bool _fa_lab_instance_owns(struct fa_lab *lab, const void *p);
void _fa_lab_instance_thread_exit(struct fa_lab *lab);

/* fork() handlers: hold every lock of the lab across fork, reset them in the child. */
void _fa_lab_instance_fork_prepare(struct fa_lab *lab);
void _fa_lab_instance_fork_parent(struct fa_lab *lab);
void _fa_lab_instance_fork_child(struct fa_lab *lab);

/* Check every heap that can be checked now (all of them, except in thread mode the heaps of
 * other live threads); aborts on a broken invariant. Returns the number of heaps checked. */
unsigned _fa_lab_instance_check(struct fa_lab *lab);

/* The heap that owns slot i's addresses (the slot must be in use). */
static inline fa_classic_heap *fa_lab_slot_heap(const struct fa_lab *lab, unsigned i)
{
    return (fa_classic_heap *)(lab->space + ((uintptr_t)i << lab->slot_shift));
}

/* The heap of slot i, created on first use; NULL if it cannot be. Caller: the slot's owner
 * (its lock holder, or the thread-mode pool lock holder). */
fa_classic_heap *_fa_lab_slot_open(struct fa_lab *lab, unsigned i);

static inline unsigned fa_lab_slot_of_heap(const struct fa_lab *lab, const fa_classic_heap *h)
{
    return (unsigned)(((uintptr_t)h - lab->space) >> lab->slot_shift);
}

static inline void *fa_lab_heap_alloc(fa_classic_heap *h, size_t alignment, size_t n)
{
    return alignment ? _fa_classic_heap_alloc_aligned(h, alignment, n)
                     : _fa_classic_heap_alloc(h, n);
}

/* threads_slots.c: the operations global and arenas modes share, each under the lock of the
 * block's slot. Visits do not count as lock acquisitions. */
void _fa_lock_slot_free(struct fa_lab *lab, unsigned slot, void *p, const char *caller);
bool _fa_lock_slot_resize(struct fa_lab *lab, unsigned slot, void *p, size_t n);
void _fa_lock_slots_visit(struct fa_lab *lab,
                          void (*fn)(fa_classic_heap *h, bool exclusive, fa_lab_lock_t *lock,
                                     void *arg),
                          void *arg);
void _fa_lock_slots_fork_prepare(struct fa_lab *lab);
void _fa_lock_slots_fork_parent(struct fa_lab *lab);
void _fa_lock_slots_fork_child(struct fa_lab *lab);
void _fa_lock_none_thread_exit(struct fa_lab *lab);
/* Their entries in a lock-ops table: {.name = "global", .alloc = ..., FA_LOCK_SLOTS_OPS}. */
#define FA_LOCK_SLOTS_OPS                                                                          \
    .free = _fa_lock_slot_free, .resize = _fa_lock_slot_resize,                                    \
    .thread_exit = _fa_lock_none_thread_exit, .visit = _fa_lock_slots_visit,                       \
    .fork_prepare = _fa_lock_slots_fork_prepare, .fork_parent = _fa_lock_slots_fork_parent,        \
    .fork_child = _fa_lock_slots_fork_child

/* lab_stats.c */
#define FA_LAB_HIST_EXACT 256                     /* bins of 16 bytes: payloads 0, 16, ..., 4080 */
#define FA_LAB_HIST_BINS (FA_LAB_HIST_EXACT + 36) /* then one per power of two up to 2^48 */
void _fa_lab_instance_stats(struct fa_lab *lab, struct fa_lab_stats *out);
void _fa_lab_instance_hist(struct fa_lab *lab, uint64_t bins[FA_LAB_HIST_BINS]);
/* The lower bound of a histogram bin (payload bytes). */
uint64_t _fa_lab_hist_bin_size(unsigned bin);
unsigned _fa_lab_hist_bin_of(size_t payload);
/* Write the histogram of `lab` to fd ("size count" lines, docs/lab.md); returns 0 (the OS
 * layer does not report write errors). */
int _fa_lab_instance_hist_write_fd(struct fa_lab *lab, int fd);
void _fa_lab_instance_stats_print(struct fa_lab *lab, int fd, bool json);
const char *_fa_lab_policy_name(enum fa_policy policy);

#endif

/* The process-wide lab of FITALLOC_MODE=lab: its entry points as a mode (lab.h) and the public
 * fa_lab_* functions (fitalloc-lab.h). It is a lab instance (lab_instance.h) configured from
 * the FITALLOC_* options. */
#include <string.h>

#include "common/message.h"
#include "common/process.h"
#include "platform/once.h"
#include "platform/arch.h"
#include "platform/compiler.h"
#include "platform/os.h"
#include "common/options.h"
#include "fitalloc-lab.h"
#include "lab/heap/heap_walk.h"
#include "lab/lab.h"
#include "lab/threads/lab_instance.h"
#include "profile/profile.h"
#include "platform/atomic.h"

static struct fa_lab *lab_global;
static uint32_t init_state; /* platform/once.h */
static bool hist_written;
static int check_fd = 2; /* FITALLOC_LAB_CHECK's line: our copy of stderr */

static const char *const lock_names[] = {
    [FA_LOCK_GLOBAL] = "global", [FA_LOCK_THREAD] = "thread", [FA_LOCK_ARENAS] = "arenas"};

/* Values the lab cannot work with are refused like a value that does not parse (options.c):
 * one warning, and the default. */
static void check_config(struct fa_lab_config *cfg)
{
    if (cfg->lock == FA_LOCK_ARENAS && cfg->arenas > FA_LAB_ARENAS_MAX) {
        _fa_option_warning("fitalloc: warning: FITALLOC_ARENAS=%u is more than the lab's %u "
                           "arenas; using 0 (8 per core)\n",
                           cfg->arenas, FA_LAB_ARENAS_MAX);
        cfg->arenas = 0;
    }
    size_t arena = cfg->heap.arena, arena_max = _fa_lab_arena_max(cfg);
    if (arena && (arena < FA_LAB_ARENA_MIN || arena > arena_max)) {
        _fa_option_warning("fitalloc: warning: FITALLOC_LAB_ARENA=%zu cannot work: with lock %s "
                           "a heap's arena is from %zu to %zu bytes; using 0 (grow as "
                           "needed)\n",
                           arena, lock_names[cfg->lock], FA_LAB_ARENA_MIN, arena_max);
        cfg->heap.arena = 0;
    }
    if (cfg->heap.exact_max > FA_LAB_EXACT_MAX_LIMIT) {
        _fa_option_warning("fitalloc: warning: FITALLOC_LAB_EXACT_MAX=%zu is more than the "
                           "largest exact-size list; using %u\n",
                           cfg->heap.exact_max, FA_LAB_EXACT_MAX_LIMIT);
        cfg->heap.exact_max = FA_LAB_EXACT_MAX_LIMIT;
    }
}

void _fa_lab_init(void)
{
    if (!fa_once_begin(&init_state))
        return;
    struct fa_lab_config cfg = {
        .heap =
            {
                .policy = (enum fa_policy)fa_option(policy),
                .index = (enum fa_lab_index)fa_option(lab_index),
                .coalesce = fa_option(lab_coalesce) != 0,
                .arena = (size_t)fa_option(lab_arena),
                .exact_max = (size_t)fa_option(lab_exact_max),
            },
        .lock = (enum fa_lock_mode)fa_option(lock),
        .arenas = (unsigned)fa_option(arenas),
        .direct = (size_t)fa_option(lab_direct),
    };
    check_config(&cfg);
    struct fa_lab *lab = _fa_lab_instance_create(&cfg);
    if (!lab)
        _fa_fatal("fitalloc: lab: cannot reserve address space for the lab heaps\n");
    if (fa_option(verbose))
        _fa_message(2,
                    "fitalloc: lab: policy %s, index %s, lock %s (%u heaps of %llu MiB), "
                    "coalescing %s\n",
                    _fa_lab_policy_name(cfg.heap.policy),
                    cfg.heap.index == FA_LAB_INDEX_LIST ? "list" : "tree", lab->ops->name,
                    lab->slots, (unsigned long long)(lab->slot_size >> 20),
                    cfg.heap.coalesce ? "on" : "off");
    if (fa_option(lab_check)) {
        /* Programs may close stderr before exit (coreutils do): keep a copy for the line. */
        int fd = _fa_os_dup(2);
        if (fd >= 0)
            check_fd = fd;
    }
    fa_atomic_store_release(&lab_global, lab);
    fa_once_end(&init_state);
}

static inline struct fa_lab *lab(void)
{
    struct fa_lab *l = fa_atomic_load_acquire(&lab_global);
    if (fa_likely(l != NULL))
        return l;
    _fa_lab_init();
    return fa_atomic_load_acquire(&lab_global);
}

void *_fa_lab_malloc(size_t n)
{
    return _fa_lab_instance_alloc(lab(), 0, n);
}

void *_fa_lab_aligned(size_t alignment, size_t n)
{
    return _fa_lab_instance_alloc(lab(), alignment, n);
}

void *_fa_lab_realloc(void *p, size_t n)
{
    return _fa_lab_instance_realloc(lab(), p, n);
}

void _fa_lab_free(void *p, const char *caller)
{
    _fa_lab_instance_free(lab(), p, caller);
}

bool _fa_lab_owns(const void *p)
{
    struct fa_lab *l = fa_atomic_load_acquire(&lab_global);
    return l && _fa_lab_instance_owns(l, p);
}

size_t _fa_lab_usable_size(const void *p)
{
    return _fa_lab_instance_usable(lab(), p);
}

/* fn on the process-wide lab, when there is one: the thread-exit and fork hooks, which must not
 * start a lab the process has not used. */
static void with_lab_if_started(void (*fn)(struct fa_lab *))
{
    struct fa_lab *l = fa_atomic_load_acquire(&lab_global);
    if (l)
        fn(l);
}

void _fa_lab_thread_exit(void)
{
    with_lab_if_started(_fa_lab_instance_thread_exit);
}

void _fa_lab_fork_prepare(void)
{
    with_lab_if_started(_fa_lab_instance_fork_prepare);
}

void _fa_lab_fork_parent(void)
{
    with_lab_if_started(_fa_lab_instance_fork_parent);
}

void _fa_lab_fork_child(void)
{
    with_lab_if_started(_fa_lab_instance_fork_child);
}

/* FITALLOC_LAB_HIST, once: from the report or, without FITALLOC_STATS, from our destructor. */
static void write_hist_option(void)
{
    const char *path = fa_option_str(lab_hist);
    if (!path || !lab_global || fa_atomic_exchange_relaxed(&hist_written, true))
        return;
    if (fa_lab_hist_write(path) != 0)
        _fa_message(2, "fitalloc: lab: cannot write the histogram to %s\n", path);
}

void _fa_lab_stats_print(int fd, bool json)
{
    struct fa_lab *l = fa_atomic_load_acquire(&lab_global);
    if (!l)
        return;
    _fa_lab_instance_stats_print(l, fd, json);
    write_hist_option();
}

/* Every allocation of the lab passes here: the heap profiler counts it (profile/profile.h),
 * with the bytes the policy granted, so that its profile says by site what the policy holds
 * beyond what was asked for. */
static void *profiled(void *p, size_t n)
{
    if (fa_unlikely(_fa_profiling) && p) {
        _fa_profile_safe_point();
        if (fa_profile_charge(n))
            _fa_profile_record_granted(p, n, _fa_lab_usable_size(p));
    }
    return p;
}

/* The calls the core hands the lab (common/mode.h). A thread's first call in the lab arms its
 * exit hook, so that the lab's thread state goes back when the thread ends. */
static void *mode_malloc(size_t n)
{
    _fa_thread_watch_exit();
    return profiled(_fa_lab_malloc(n), n);
}

static void *mode_aligned(size_t alignment, size_t n)
{
    _fa_thread_watch_exit();
    return profiled(_fa_lab_aligned(alignment, n), n);
}

/* calloc's requests above the core's size classes: the lab has no large blocks of its own. */
static void *mode_large(size_t n, size_t alignment, bool zero)
{
    void *p = alignment > 16 ? mode_aligned(alignment, n) : mode_malloc(n);
    if (p && zero)
        memset(p, 0, n);
    return p;
}

static void mode_free(void *p, const char *caller, size_t size)
{
    (void)size;
    if (fa_unlikely(_fa_profiling))
        _fa_profile_forget(p);
    _fa_lab_free(p, caller);
}

static void *mode_realloc(void *p, size_t n)
{
    _fa_thread_watch_exit();
    void *q = _fa_lab_realloc(p, n);
    if (fa_unlikely(_fa_profiling) && q)
        _fa_profile_forget(p);
    return profiled(q, n);
}

const struct fa_mode_ops _fa_lab_mode = {
    .malloc = mode_malloc,
    .aligned = mode_aligned,
    .large = mode_large,
    .owns = _fa_lab_owns,
    .free = mode_free,
    .realloc = mode_realloc,
    .usable_size = _fa_lab_usable_size,
    .heapless = true,
    .trace_id = 1,
    .thread_exit = _fa_lab_thread_exit,
    .fork_prepare = _fa_lab_fork_prepare,
    .fork_parent = _fa_lab_fork_parent,
    .fork_child = _fa_lab_fork_child,
    .stats_print = _fa_lab_stats_print,
};

/* FITALLOC_LAB_CHECK: the checker over every heap at exit (the per-operation checks run only in
 * debug builds). A broken heap stops the program with the checker's report; a sound one
 * gets a line, so that a test can tell the check ran. */
static void check_option(void)
{
    struct fa_lab *l = fa_atomic_load_acquire(&lab_global);
    if (!fa_option(lab_check) || !l)
        return;
    unsigned heaps = _fa_lab_instance_check(l);
    _fa_message(check_fd, "fitalloc: lab: %u heap(s) checked at exit: sound\n", heaps);
}

__attribute__((destructor)) static void lab_at_exit(void)
{
    check_option();
    write_hist_option();
}

FA_API int fa_lab_stats_get(struct fa_lab_stats *out)
{
    struct fa_lab *l = fa_atomic_load_acquire(&lab_global);
    if (!l || !out || out->size < sizeof *out)
        return -1;
    _fa_lab_instance_stats(l, out);
    return 0;
}

FA_API int fa_lab_hist_write(const char *path)
{
    struct fa_lab *l = fa_atomic_load_acquire(&lab_global);
    if (!l || !path)
        return -1;
    int fd = _fa_os_create_append(path);
    if (fd < 0)
        return -1;
    int result = _fa_lab_instance_hist_write_fd(l, fd);
    _fa_os_close(fd);
    return result;
}

FA_API int fa_lab_check(void)
{
    struct fa_lab *l = fa_atomic_load_acquire(&lab_global);
    if (!l)
        return -1;
    _fa_lab_instance_check(l);
    return 0;
}

FA_API int fa_lab_walk(fa_lab_walk_fn fn, void *arg)
{
    struct fa_lab *l = fa_atomic_load_acquire(&lab_global);
    if (!l || !fn)
        return -1;
    return (int)_fa_lab_instance_walk(l, fn, arg);
}

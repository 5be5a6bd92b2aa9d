/* Process start, exit and fork, and the choice of the allocation mode (common/mode.h).
 *
 * The first allocation may come before main, from another library's constructor or from the
 * dynamic loader itself, so initialisation is lazy and calls nothing that allocates: options
 * come from `environ` (read again by our constructor if it was not set up yet), the thread-exit
 * hook is a thread key (thread_exit.c), fork handlers are registered with the C library.
 * Threads (the purger) are created only after our constructor has run, and only when needed.
 */
#include "common/options.h"
#include "platform/once.h"
#include "engine/free_list.h"
#include "fitalloc.h"
#include "lab/lab.h"
#include "profile/profile.h"
#include "process/process_internal.h"
#include "platform/atomic.h"

bool _fa_started FA_BSS_FIRST;
const struct fa_mode_ops *_fa_mode = &_fa_core_mode;
static uint32_t init_state FA_BSS_FIRST; /* platform/once.h */
static bool options_read FA_BSS_FIRST;
static int stats_fd = 2;

static void fork_prepare(void)
{
    _fa_profile_fork_prepare();
    if (_fa_mode->fork_prepare)
        _fa_mode->fork_prepare();
    _fa_purge_fork_prepare();
    fa_mutex_lock(&_fa_global_lock);
    /* Last: it write-protects meshed pages, and a thread that faults on one waits, maybe
     * holding a lock taken above. */
    _fa_mesh_before_fork();
}

static void fork_parent(void)
{
    _fa_mesh_after_fork_parent();
    fa_mutex_unlock(&_fa_global_lock);
    _fa_purge_fork_parent();
    if (_fa_mode->fork_parent)
        _fa_mode->fork_parent();
    _fa_profile_fork_parent();
}

static void fork_child(void)
{
    fa_mutex_reset(&_fa_global_lock);
    _fa_os_note_main_thread();
    _fa_segments_fork_child();
    _fa_mesh_after_fork_child();
    _fa_purge_after_fork();
    if (_fa_mode->fork_child)
        _fa_mode->fork_child();
    _fa_trace_fork_child();
    _fa_profile_fork_child();
}

/* Lab mode, once the options say so. If the first allocations came before environ was
 * readable, this thread may already have a fast-engine heap: it stops using it (its blocks
 * stay valid and are freed as usual). */
static void start_lab_if_asked(void)
{
    if (fa_option(mode) != FA_MODE_LAB || _fa_mode == &_fa_lab_mode)
        return;
    _fa_lab_init();
    fa_atomic_store_release(&_fa_mode, &_fa_lab_mode);
    _fa_heap_abandon_mine();
}

/* Secure mode (libfitalloc-secure.so only), once the options say so, and not in the lab:
 * whether it started. */
static bool start_secure_if_asked(void)
{
    const struct fa_mode_ops *secure = _fa_secure_init();
    if (!secure || _fa_mode == &_fa_lab_mode)
        return false;
    fa_atomic_store_release(&_fa_mode, secure);
    return true;
}

void _fa_process_init(void)
{
    if (fa_likely(!fa_once_begin(&init_state)))
        return;
    unsigned address_bits = _fa_os_address_bits();
    if (address_bits > FA_ADDRESS_BITS)
        _fa_fatal("fitalloc: this system hands out %u-bit addresses; fitalloc handles %u "
                  "(src/platform/arch.h)\n",
                  address_bits, FA_ADDRESS_BITS);
    options_read = _fa_options_init();
    _fa_list_secret = _fa_os_random() | (uintptr_t)1 << 63; /* free_list.h: why the top bit */
    start_secure_if_asked();
    _fa_purge_init();
    _fa_mesh_init();
    _fa_thread_exit_init();
    start_lab_if_asked();
    if (options_read)
        _fa_pages_slow = _fa_trace_start(); /* a traced call must reach the slow paths */
    _fa_os_atfork(fork_prepare, fork_parent, fork_child);
    fa_once_end(&init_state);
}

__attribute__((constructor(101))) static void fa_constructor(void)
{
    _fa_process_init();
    _fa_os_note_main_thread();
    if (!options_read) {
        options_read = _fa_options_init();
        start_lab_if_asked();
        /* Blocks allocated before we could read the options stay in default pages. */
        bool secure = start_secure_if_asked();
        _fa_mesh_init();
        _fa_pages_slow = _fa_trace_start();
        if (secure || _fa_pages_slow)
            _fa_heap_abandon_mine();
    }
    /* It loads the stack unwinder, which allocates: not before now. */
    _fa_profile_start();
    _fa_started = true;
    /* The main thread's exit hook runs only if it calls pthread_exit: then the purger must
     * not keep the process alive (purge.c). */
    _fa_thread_watch_exit();
    /* Programs may close stderr before exit (coreutils do): keep our own copy for the report. */
    if (fa_option(stats)) {
        int fd = _fa_os_dup(2);
        if (fd >= 0)
            stats_fd = fd;
    }
    /* Work queued before we ran (other constructors' frees) starts the purger now; otherwise
     * the first call that queues some does (purge.c). */
    _fa_purge_start_point();
    if (fa_option(verbose))
        _fa_message(2, "fitalloc: started in pid %d (purge delay %lld ms, purge thread %s)\n",
                    _fa_os_pid(), fa_option(purge_delay), fa_option(purge_thread) ? "on" : "off");
}

__attribute__((destructor(101))) static void fa_destructor(void)
{
    _fa_trace_process_exit();
    _fa_profile_exit();
    _fa_secure_check_quarantine();
    if (!fa_option(stats))
        return;
    _fa_mode->stats_print(stats_fd, fa_option(stats) == FA_STATS_JSON);
}

void _fa_process_fatal(void)
{
    _fa_trace_fatal();
}

FA_API long long fa_option_get(const char *name)
{
    _fa_process_init();
    return _fa_option_by_name(name);
}

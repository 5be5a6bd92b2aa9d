/* The thread-exit hook: what each layer does when a thread that used fitalloc ends. It is armed
 * at a thread's first heap or first call in the other mode (and by our constructor for the
 * main thread, whose hook runs only if it calls pthread_exit). */
#include "engine/engine.h"
#include "process/process_internal.h"

/* This thread's hook is armed; cleared when the hook runs, so that a thread that allocates
 * again during its exit (other libraries' destructors) arms it again. */
static __thread bool exit_watched __attribute__((tls_model("initial-exec")));

static void thread_exit(void)
{
    exit_watched = false;
    _fa_heap_thread_ended();
    if (_fa_mode->thread_exit)
        _fa_mode->thread_exit();
    if (_fa_tracing)
        _fa_trace_thread_exit();
    _fa_purge_thread_ended(_fa_os_is_main_thread());
}

void _fa_thread_exit_init(void)
{
    _fa_os_thread_exit_hook(thread_exit);
}

void _fa_thread_watch_exit(void)
{
    if (fa_likely(exit_watched))
        return;
    exit_watched = true;
    _fa_os_thread_exit_arm();
}

/* Handing free memory back to the OS after FITALLOC_PURGE_DELAY milliseconds.
 *
 * Free pages, cached segments and cached large blocks carry the time they became free. A
 * background thread wakes when something is due and purges it, so memory returns even when the
 * program stops calling the allocator. It sleeps without a timeout when nothing is pending; the
 * first kick after that wakes it. With FITALLOC_PURGE_THREAD=0, if the thread cannot be created,
 * or once it has retired (below), threads purge inline from the allocator's slow paths instead.
 *
 * The thread starts only once there is something to purge: a process that never frees a page
 * or a large block (most short commands) does not pay for a thread. The first kick only marks
 * it wanted, since kicks come with locks held and in the middle of a heap's update, and
 * pthread_create allocates; the allocator call that kicked starts it at its end, at a start
 * point (_fa_purge_start_point), where no lock is held and the heap is whole.
 *
 * What a pass purges is purge_pass.c's, which sits above the files that kick the purger here:
 * it gives its pass at process start (_fa_purge_init).
 */
#include <errno.h>

#include "common/options.h"
#include "engine/engine.h"
#include "platform/atomic.h"

enum purger_state { PURGER_NONE, PURGER_WANTED, PURGER_RUNNING, PURGER_RETIRED };

static uint32_t wake_word;    /* futex word: bumped to wake an idle purger */
static uint32_t sleep_word;   /* futex word nobody changes: a timed sleep that kicks leave alone */
static uint32_t purger_idle;  /* the purger sleeps with no timeout */
static uint32_t purger_state; /* enum purger_state */
static fa_mutex_t pass_lock = FA_MUTEX_INIT;
static uint32_t main_exited;      /* the program's main thread called pthread_exit */
static uint64_t quick_poll_until; /* ms: a thread just ended, the last one may follow soon */

static void (*pass)(uint64_t now, bool force, long *next) FA_BSS_FIRST;

void _fa_purge_set_pass(void (*fn)(uint64_t now, bool force, long *next))
{
    pass = fn;
}

long _fa_purge_run(bool force)
{
    long next = -1;
    fa_mutex_lock(&pass_lock);
    if (pass)
        pass(_fa_os_now_ms(), force, &next);
    fa_mutex_unlock(&pass_lock);
    return next;
}

/* A process lives until its last thread ends, and the purger never ends by itself: once the
 * main thread has left with pthread_exit, the purger checks whether it is the last thread
 * standing (the exited main thread still counts as one) and then ends too. Without a count it
 * cannot tell, and it must not keep the process alive. No /proc will not come back: it ends at
 * once. A shortage (no file descriptor or memory left to read the count) may pass: it tries
 * again at its next look, for up to FA_COUNT_RETRY_MS, keeping the process alive that long at
 * most after its last other thread, and then ends. Either way it retires for good, and the
 * allocator's calls purge from then on: a purger started again would end again at once, on
 * every slow path. */
#define FA_COUNT_RETRY_MS 1000
static uint64_t count_failing_since; /* ms; 0 while counts succeed (the purger's own) */

static bool count_may_come_back(int error)
{
    return error == EMFILE || error == ENFILE || error == ENOMEM || error == EAGAIN ||
           error == EINTR;
}

static bool purger_must_end(void)
{
    if (!fa_atomic_load_acquire(&main_exited))
        return false;
    int threads = _fa_os_thread_count();
    if (threads >= 0) {
        count_failing_since = 0;
        return threads <= 2;
    }
    uint64_t now = _fa_os_now_ms();
    if (!count_failing_since)
        count_failing_since = now;
    if (count_may_come_back(-threads) && now < count_failing_since + FA_COUNT_RETRY_MS)
        return false;
    if (fa_option(verbose))
        _fa_message(2,
                    "fitalloc: cannot count the threads (/proc/self/stat, error %d): the purge "
                    "thread ends, allocator calls purge from now on\n",
                    -threads);
    return true;
}

static void *purger_main(void *arg)
{
    (void)arg;
    for (;;) {
        if (purger_must_end()) {
            fa_atomic_store_release(&purger_state, PURGER_RETIRED);
            return NULL;
        }
        uint32_t seen = fa_atomic_load_acquire(&wake_word);
        /* Announce idleness before looking: a kick after this point wakes us; a kick before
         * it made its work visible to the pass below. */
        fa_atomic_store_seq_cst(&purger_idle, 1);
        long next = _fa_purge_run(false);
        if (fa_atomic_load_acquire(&main_exited)) {
            /* Poll for the other threads' end: quickly right after a thread ended (so the
             * process ends promptly after its last one), slowly otherwise. */
            bool soon = _fa_os_now_ms() < fa_atomic_load_relaxed(&quick_poll_until);
            long poll = soon ? 1 : 100;
            if (next < 0 || next > poll)
                next = poll;
        }
        if (next >= 0) {
            fa_atomic_store_relaxed(&purger_idle, 0);
            _fa_os_futex_wait(&sleep_word, 0, next);
        } else {
            _fa_os_futex_wait(&wake_word, seen, -1);
        }
    }
    return NULL;
}

void _fa_purge_thread_ended(bool main_thread)
{
    if (main_thread)
        fa_atomic_store_release(&main_exited, 1);
    if (!fa_atomic_load_acquire(&main_exited))
        return;
    fa_atomic_store_relaxed(&quick_poll_until, _fa_os_now_ms() + 20);
    /* Cut a timed sleep short (FUTEX_WAKE needs no change of the word) or an idle one. */
    _fa_os_futex_wake(&sleep_word, 1);
    _fa_purge_kick();
}

void _fa_purge_kick(void)
{
    if (fa_atomic_load_seq_cst(&purger_idle) && fa_atomic_exchange_seq_cst(&purger_idle, 0)) {
        fa_atomic_add_release(&wake_word, 1);
        _fa_os_futex_wake(&wake_word, 1);
        return;
    }
    /* The first work of the process (or of a fork child): the call's start point starts the
     * purger. */
    if (fa_unlikely(fa_atomic_load_relaxed(&purger_state) == PURGER_NONE))
        _fa_purge_want();
}

void _fa_purge_want(void)
{
    /* A compare-and-swap, so that a purger already started is never marked again. */
    uint32_t expected = PURGER_NONE;
    fa_atomic_cas_acq_rel(&purger_state, &expected, PURGER_WANTED);
}

int _fa_purge_threads(void)
{
    return fa_atomic_load_acquire(&purger_state) == PURGER_RUNNING && fa_option(purge_thread);
}

void _fa_purge_start_point(void)
{
    if (fa_likely(fa_atomic_load_relaxed(&purger_state) != PURGER_WANTED))
        return;
    /* Threads wait for our constructor (start.c). The compare-and-swap makes the start once:
     * pthread_create's own allocations reach start points too. */
    uint32_t expected = PURGER_WANTED;
    if (!_fa_started || !fa_option(purge_thread) ||
        !fa_atomic_cas_acq_rel(&purger_state, &expected, PURGER_RUNNING))
        return;
    int rc = _fa_os_thread_start(purger_main, 64 << 10);
    if (rc != 0) {
        fa_option(purge_thread) = 0;
        if (fa_option(verbose))
            _fa_message(2, "fitalloc: no purge thread (error %d): purging inline\n", rc);
    }
}

void _fa_purge_safe_point(fa_heap_t *heap)
{
    if (fa_likely(fa_option(purge_thread))) {
        uint32_t state = fa_atomic_load_relaxed(&purger_state);
        if (fa_unlikely(state == PURGER_WANTED))
            _fa_purge_start_point();
        if (fa_likely(state != PURGER_RETIRED))
            return;
    }
    uint64_t now = _fa_os_now_ms();
    if (now < heap->next_purge)
        return;
    uint64_t delay = (uint64_t)fa_option(purge_delay);
    heap->next_purge = now + (delay > 20 ? delay / 2 : 10);
    _fa_purge_run(false);
}

void _fa_purge_after_fork(void)
{
    /* The purger did not follow us into the child. The child holds what the parent had to
     * purge: it starts its own at its first start point, unless the parent never needed one. */
    fa_mutex_reset(&pass_lock);
    if (fa_atomic_load_relaxed(&purger_state) != PURGER_NONE)
        fa_atomic_store_relaxed(&purger_state, PURGER_WANTED);
    fa_atomic_store_relaxed(&purger_idle, 0);
    count_failing_since = 0;
}

void _fa_purge_fork_prepare(void)
{
    fa_mutex_lock(&pass_lock);
}

void _fa_purge_fork_parent(void)
{
    fa_mutex_unlock(&pass_lock);
}

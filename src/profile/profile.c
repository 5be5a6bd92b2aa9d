/* FITALLOC_PROFILE=PREFIX: the profiler's start, its files at exit (PREFIX.<pid>.peak.heap and
 * PREFIX.<pid>.exit.heap), on FITALLOC_PROFILE_SIGNAL (PREFIX.<pid>.<n>.heap) and after fork,
 * and the record of a sample with its stack (docs/profile.md). */
#include <string.h>

#include "common/message.h"
#include "common/options.h"
#include "profile/profile_internal.h"
#include "platform/atomic.h"
#include "platform/os.h"

#define FA_PROFILE_PREFIX_MAX 4096

bool _fa_profiling;
uintptr_t _fa_profile_own_start, _fa_profile_own_end;
static char *prefix;
uint32_t _fa_profile_signals, _fa_profile_signals_seen;
static uint32_t dumps;

__attribute__((noinline, used)) void fitalloc_profile_stack_truncated(void)
{
    __asm__ volatile("");
}

static bool set_up(void)
{
    const char *path = fa_option_str(profile);
    if (strlen(path) >= FA_PROFILE_PREFIX_MAX - 64) {
        _fa_message(2,
                    "fitalloc: warning: FITALLOC_PROFILE=%.64s...: too long a prefix; not "
                    "profiling\n",
                    path);
        return false;
    }
    if (!fa_option(profile_rate)) {
        _fa_message(2, "fitalloc: warning: FITALLOC_PROFILE_RATE must be a size above 0 (512K, "
                       "2M, ...); not profiling\n");
        return false;
    }
    /* Copied: a program may write over its environment's strings. */
    fa_mutex_lock(&_fa_profile_lock);
    prefix = _fa_profile_take(strlen(path) + 1);
    fa_mutex_unlock(&_fa_profile_lock);
    if (!prefix)
        return false;
    strcpy(prefix, path);
    _fa_profile_rate = (uint64_t)fa_option(profile_rate);
    /* An unwritable prefix is found now, not at exit: try the peak file. */
    char probe[FA_PROFILE_PREFIX_MAX + 32];
    int pid = _fa_os_pid();
    char digits[16], *d = digits + sizeof digits;
    *--d = 0;
    do
        *--d = (char)('0' + pid % 10);
    while ((pid /= 10) != 0);
    strcpy(probe, prefix);
    strcat(probe, ".");
    strcat(probe, d);
    strcat(probe, ".peak.heap");
    int fd = _fa_os_create_append(probe);
    if (fd < 0) {
        _fa_message(2, "fitalloc: warning: FITALLOC_PROFILE: cannot write %s (%s); not profiling\n",
                    probe, _fa_os_error_text(-fd));
        return false;
    }
    _fa_os_close(fd);
    if (!_fa_os_unwinder_load()) {
        _fa_message(2, "fitalloc: warning: FITALLOC_PROFILE: no stack unwinder (libgcc_s.so.1) can "
                       "be loaded; not profiling\n");
        return false;
    }
    const char *signal_name = fa_option_str(profile_signal);
    if (signal_name) {
        int sig = _fa_os_signal_number(signal_name);
        if (sig < 0 || !_fa_os_signal_count(sig, &_fa_profile_signals))
            _fa_message(2,
                        "fitalloc: warning: FITALLOC_PROFILE_SIGNAL=%s is not a signal the "
                        "profile can take; profiling without it\n",
                        signal_name);
    }
    /* Frames of fitalloc's own code are left out of stacks, unless it is linked into the
     * program itself: then a stack starts in malloc. */
    if (!_fa_os_code_in_program((const void *)set_up))
        _fa_os_code_range((const void *)set_up, &_fa_profile_own_start, &_fa_profile_own_end);
    return true;
}

void _fa_profile_start(void)
{
    if (_fa_profiling || !fa_option_str(profile))
        return;
    _fa_profile_self.busy = true; /* what dlopen allocates is not sampled */
    bool ok = set_up();
    _fa_profile_self.busy = false;
    fa_atomic_store_release(&_fa_profiling, ok);
}

void _fa_profile_count(const void *p, size_t bytes)
{
    _fa_profile_safe_point();
    if (fa_profile_charge(bytes))
        _fa_profile_record(p, bytes);
}

void _fa_profile_record(const void *p, size_t bytes)
{
    _fa_profile_record_granted(p, bytes, bytes);
}

void _fa_profile_record_granted(const void *p, size_t bytes, size_t granted)
{
    struct fa_profile_thread *t = &_fa_profile_self;
    if (t->busy)
        return;
    t->busy = true;
    /* Room for fitalloc's own frames, left out below, and one past the limit. */
    uintptr_t frames[FA_PROFILE_DEPTH + 17];
    bool truncated;
    size_t count = _fa_os_stack(frames, FA_PROFILE_DEPTH + 17, &truncated);
    size_t first = 0;
    while (first < count &&
           frames[first] - _fa_profile_own_start < _fa_profile_own_end - _fa_profile_own_start)
        first++;
    size_t depth = count - first;
    if (depth > FA_PROFILE_DEPTH || truncated) {
        /* A stack deeper than the limit: its innermost frames, then the marker pprof names,
         * as a return address just past the marker function's first byte. */
        depth = depth < FA_PROFILE_DEPTH ? depth : FA_PROFILE_DEPTH;
        frames[first + depth++] = (uintptr_t)fitalloc_profile_stack_truncated + 1;
    }
    if (depth == 0)
        frames[first + depth++] = 0;
    _fa_profile_table_record(p, bytes, granted, frames + first, depth);
    t->busy = false;
}

static void dump_asked(void)
{
    uint32_t n = ++dumps;
    char name[16], *d = name + sizeof name;
    *--d = 0;
    do
        *--d = (char)('0' + n % 10);
    while ((n /= 10) != 0);
    _fa_profile_write(prefix, d, false);
}

void _fa_profile_safe_point(void)
{
    uint32_t seen = fa_atomic_load_relaxed(&_fa_profile_signals);
    if (fa_likely(seen == fa_atomic_load_relaxed(&_fa_profile_signals_seen)))
        return;
    struct fa_profile_thread *t = &_fa_profile_self;
    if (t->busy)
        return;
    t->busy = true;
    fa_mutex_lock(&_fa_profile_lock);
    /* One file for the signals that came since the last look. */
    if (fa_atomic_exchange_relaxed(&_fa_profile_signals_seen, seen) != seen)
        dump_asked();
    fa_mutex_unlock(&_fa_profile_lock);
    t->busy = false;
}

void _fa_profile_exit(void)
{
    if (!_fa_profiling)
        return;
    _fa_profile_self.busy = true;
    fa_mutex_lock(&_fa_profile_lock);
    _fa_profile_snapshot_if_higher();
    _fa_profile_write(prefix, "peak", true);
    _fa_profile_write(prefix, "exit", false);
    fa_mutex_unlock(&_fa_profile_lock);
    _fa_profile_self.busy = false;
}

void _fa_profile_fork_prepare(void)
{
    if (_fa_profiling)
        fa_mutex_lock(&_fa_profile_lock);
}

void _fa_profile_fork_parent(void)
{
    if (_fa_profiling)
        fa_mutex_unlock(&_fa_profile_lock);
}

/* The child starts a profile of its own: what it allocates from now on, in files named by its
 * pid. The blocks it inherited are not in it. */
void _fa_profile_fork_child(void)
{
    if (!_fa_profiling)
        return;
    fa_mutex_reset(&_fa_profile_lock);
    _fa_profile_tables_reset();
    dumps = 0;
    fa_atomic_store_relaxed(&_fa_profile_signals_seen,
                            fa_atomic_load_relaxed(&_fa_profile_signals));
}

/* A signal that only counts: the heap profiler's FITALLOC_PROFILE_SIGNAL. The handler adds one
 * to a counter and returns; the program's allocator calls notice the change at a point where
 * writing a file is safe (no lock held, no allocation under way), never in the handler. */
#define _GNU_SOURCE /* sigabbrev_np */
#include <signal.h>
#include <string.h>

#include "platform/atomic.h"
#include "platform/os.h"

static uint32_t *counter;

static void count(int sig)
{
    (void)sig;
    fa_atomic_add_relaxed(counter, 1);
}

int _fa_os_signal_number(const char *name)
{
    if (!strncmp(name, "SIG", 3))
        name += 3;
    if (*name >= '0' && *name <= '9') {
        int n = 0;
        for (; *name >= '0' && *name <= '9' && n < 1000; name++)
            n = n * 10 + (*name - '0');
        return !*name && n > 0 && n < NSIG ? n : -1;
    }
    for (int sig = 1; sig < NSIG; sig++) {
        const char *abbrev = sigabbrev_np(sig);
        if (abbrev && !strcmp(abbrev, name))
            return sig;
    }
    return -1;
}

bool _fa_os_signal_count(int sig, uint32_t *count_into)
{
    /* SIGKILL and SIGSTOP cannot be caught; a fault's signal must not return to its fault. */
    if (sig == SIGKILL || sig == SIGSTOP || sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE ||
        sig == SIGILL)
        return false;
    counter = count_into;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = count;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    return sigaction(sig, &action, NULL) == 0;
}

/* Faults fitalloc causes on purpose: in secure mode, an access to a guard page or a quarantined
 * block is reported (the hook does not return). Meshing needs no handler: what it holds still
 * is frozen with userfaultfd (freeze.c), where a writer waits in the kernel. Each hook is asked
 * in turn; every other fault goes on to the handler the program (or a sanitizer, or a
 * language runtime) installed before ours, as if ours were not there; with none, to the
 * default action. */
#define _GNU_SOURCE
#include "platform/os.h"
#include "platform/keep_errno.h"

#include <errno.h>
#include <signal.h>
#include <stddef.h>

#define FA_FAULT_HOOKS 1 /* secure mode's */
static bool (*hooks[FA_FAULT_HOOKS])(uintptr_t address);
static struct sigaction previous;

/* The fault is not ours: what would have happened without our handler. */
static void forward(int sig, siginfo_t *info, void *context)
{
    if (previous.sa_flags & SA_SIGINFO) {
        previous.sa_sigaction(sig, info, context);
        return;
    }
    if (previous.sa_handler == SIG_DFL || previous.sa_handler == SIG_IGN) {
        /* A SIGSEGV of a faulting instruction cannot be ignored: put the default action back
         * and return; the instruction faults again and ends the process as it would have. */
        struct sigaction dfl = {.sa_handler = SIG_DFL};
        sigemptyset(&dfl.sa_mask);
        sigaction(SIGSEGV, &dfl, NULL);
        return;
    }
    previous.sa_handler(sig);
}

static void on_fault(int sig, siginfo_t *info, void *context)
{
    bool ours = false;
    {
        FA_KEEP_ERRNO; /* the code the signal interrupted, or the handler forwarded to, sees it */
        bool access = info->si_code == SEGV_ACCERR || info->si_code == SEGV_MAPERR;
        for (int i = 0; i < FA_FAULT_HOOKS && !ours && access; i++)
            ours = hooks[i] && hooks[i]((uintptr_t)info->si_addr);
    }
    if (!ours)
        forward(sig, info, context);
}

bool _fa_os_fault_hook(bool (*retry)(uintptr_t address))
{
    FA_KEEP_ERRNO;
    bool added = false;
    for (int i = 0; i < FA_FAULT_HOOKS && !added; i++) {
        added = hooks[i] == retry;
        if (!hooks[i]) {
            hooks[i] = retry;
            added = true;
        }
    }
    struct sigaction current;
    bool ok = added && sigaction(SIGSEGV, NULL, &current) == 0;
    if (ok && !((current.sa_flags & SA_SIGINFO) && current.sa_sigaction == on_fault)) {
        /* A fault before the next line still goes to `current` itself: nothing is lost. */
        previous = current;
        struct sigaction mine = {.sa_sigaction = on_fault,
                                 .sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART};
        sigemptyset(&mine.sa_mask);
        ok = sigaction(SIGSEGV, &mine, NULL) == 0;
    }
    return ok;
}

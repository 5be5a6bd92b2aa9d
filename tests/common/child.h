/* Run a function in a forked child and capture what it writes to stderr.
 *
 * Header-only, like check.h. The helper itself allocates nothing: the pipe is read into the
 * caller's buffer (and a stack scratch buffer once that is full), so between the fork and the
 * child's end only fn itself may allocate.
 */
#ifndef FITALLOC_TESTS_CHILD_H
#define FITALLOC_TESTS_CHILD_H

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

/* Fork; the child sends its stderr to a pipe, arms alarm(20) (a hang dies of SIGALRM), runs
 * fn(arg) and exits with 91 if fn returns (90 if the pipe could not become its stderr). The
 * parent reads the child's stderr to the end (retrying on EINTR) into out, NUL-terminated and
 * cut to out_size - 1 bytes (out_size > 0), waits for the child and returns its wait status. */
static inline int fa_test_run_child(void (*fn)(void *), void *arg, char *out, size_t out_size)
{
    int fds[2];
    CHECK(out_size > 0);
    CHECK_EQ(pipe(fds), 0);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        if (dup2(fds[1], 2) != 2)
            _exit(90);
        if (fds[1] != 2)
            close(fds[1]);
        alarm(20);
        fn(arg);
        _exit(91); /* the child was expected not to return from fn */
    }
    close(fds[1]);
    size_t len = 0;
    for (;;) {
        char spill[256]; /* what does not fit in out: read and dropped, so the child never blocks */
        char *to = len < out_size - 1 ? out + len : spill;
        size_t room = len < out_size - 1 ? out_size - 1 - len : sizeof spill;
        ssize_t k = read(fds[0], to, room);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        if (to != spill)
            len += (size_t)k;
    }
    out[len] = 0;
    close(fds[0]);
    int status = 0;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    return status;
}

/* fn(arg) in a child (fa_test_run_child) must end by SIGABRT with `expected` in what it writes
 * to stderr; a failed check names `what`. The child's stderr is left in out. */
static inline void fa_test_expect_abort(const char *what, void (*fn)(void *), void *arg,
                                        const char *expected, char *out, size_t out_size)
{
    int status = fa_test_run_child(fn, arg, out, out_size);
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
              "%s: child did not abort (status %#x), stderr: %s", what, status, out);
    CHECK_MSG(strstr(out, expected) != NULL, "%s: stderr lacks \"%s\": %s", what, expected, out);
}

/* Wait for child pid for at most `seconds`, then kill it (SIGKILL) and reap it: whether it
 * ended by itself, its wait status in *status. For programs that must end on their own (a
 * thread left behind would keep them alive). */
static inline bool fa_test_wait_ends(pid_t pid, unsigned seconds, int *status)
{
    pid_t done = 0;
    for (unsigned tries = 0; tries < seconds * 10 && done == 0; tries++) {
        done = waitpid(pid, status, WNOHANG);
        if (done == 0) {
            struct timespec pause = {0, 100 * 1000 * 1000};
            nanosleep(&pause, NULL);
        }
    }
    if (done == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, status, 0);
    }
    return done == pid;
}

#endif /* FITALLOC_TESTS_CHILD_H */

/* ctest labels: errors */
/* A report of misuse ends with SIGABRT the way abort() does: a SIGABRT handler the program
 * installed runs (a crash reporter), and the process still ends whatever the handler does. In
 * forked children, a double free is reported:
 *   - a handler that records that it ran and exits with 42: status 42, after the report;
 *   - a handler that records that it ran and returns: it ran once, the child dies of SIGABRT;
 *   - SIGABRT ignored, or blocked, without a handler: the child dies of SIGABRT. */
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "child.h"
#include "fitalloc.h"

static char out[4096];

static void report_ran(void)
{
    static const char line[] = "handler ran\n";
    (void)!write(2, line, sizeof line - 1);
}

static void exit_42(int sig)
{
    (void)sig;
    report_ran();
    _exit(42);
}

static void record_and_return(int sig)
{
    (void)sig;
    report_ran();
}

static void double_free(void)
{
    char *p = fa_malloc(32);
    CHECK(p != NULL);
    fa_free(p);
    fa_free(p);
}

static void with_handler(void *arg)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = (void (*)(int))arg;
    CHECK_EQ(sigaction(SIGABRT, &sa, NULL), 0);
    double_free();
}

static void ignoring(void *arg)
{
    (void)arg;
    signal(SIGABRT, SIG_IGN);
    double_free();
}

static void blocking(void *arg)
{
    (void)arg;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGABRT);
    CHECK_EQ(sigprocmask(SIG_BLOCK, &set, NULL), 0);
    double_free();
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *at = strstr(text, what); at; at = strstr(at + 1, what))
        n++;
    return n;
}

static void expect_report(const char *name)
{
    CHECK_MSG(strstr(out, "fitalloc: free(): double free of ") != NULL, "%s: no report: %s", name,
              out);
}

int main(void)
{
    int status = fa_test_run_child(with_handler, (void *)exit_42, out, sizeof out);
    expect_report("exiting handler");
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 42,
              "a SIGABRT handler that exits with 42: status %#x, stderr: %s", status, out);
    CHECK_MSG(strstr(out, "double free") < strstr(out, "handler ran"),
              "the handler did not run after the report: %s", out);

    status = fa_test_run_child(with_handler, (void *)record_and_return, out, sizeof out);
    expect_report("returning handler");
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
              "a SIGABRT handler that returns: status %#x, stderr: %s", status, out);
    CHECK_MSG(count(out, "handler ran\n") == 1, "the handler ran %d times: %s",
              count(out, "handler ran\n"), out);

    status = fa_test_run_child(ignoring, NULL, out, sizeof out);
    expect_report("SIGABRT ignored");
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
              "SIGABRT ignored: status %#x, stderr: %s", status, out);

    status = fa_test_run_child(blocking, NULL, out, sizeof out);
    expect_report("SIGABRT blocked");
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
              "SIGABRT blocked: status %#x, stderr: %s", status, out);
    printf("process/abort_handler: ok\n");
    return 0;
}

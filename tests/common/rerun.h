/* Run this test program again in a fresh process under other FITALLOC_* settings, which
 * fitalloc reads once, at its start. Header-only, like check.h. */
#ifndef FITALLOC_TESTS_RERUN_H
#define FITALLOC_TESTS_RERUN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "fitalloc.h"

/* Fork; the child applies env (NULL-terminated: "NAME=value" sets NAME, "NAME" unsets it),
 * calls before_exec(arg) if given, and execs /proc/self/exe with args (args[0]: the program's
 * argv[0]; NULL-terminated). The parent waits and CHECKs that the child exited with 0, the
 * message naming `what`; the child's process id. */
static inline pid_t fa_test_rerun_with(const char *what, const char *const env[],
                                       char *const args[], void (*before_exec)(void *), void *arg)
{
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        for (size_t i = 0; env && env[i]; i++) {
            char name[128];
            const char *eq = strchr(env[i], '=');
            size_t len = eq ? (size_t)(eq - env[i]) : strlen(env[i]);
            if (len >= sizeof name)
                _exit(125);
            memcpy(name, env[i], len);
            name[len] = 0;
            if (eq ? setenv(name, eq + 1, 1) : unsetenv(name))
                _exit(125);
        }
        if (before_exec)
            before_exec(arg);
        execv("/proc/self/exe", args);
        _exit(127);
    }
    int status = 0;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: the run %s %d", what,
              WIFEXITED(status) ? "exited with" : "died of signal",
              WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    return pid;
}

#define fa_test_rerun(what, env, args) fa_test_rerun_with((what), (env), (args), NULL, NULL)

/* The start of a secure-mode test: 77 (skipped) under a sanitizer; in the first run, this test
 * again under FITALLOC_SECURE=1 (extra: one more "NAME=value", or NULL) and 0 when it passed;
 * -1 in that second run, which is the test. */
static inline int fa_test_rerun_secure(const char *name, const char *extra, char **argv)
{
    if (FA_TEST_SANITIZED) {
        printf("%s: skipped under a sanitizer\n", name);
        return 77;
    }
    if (getenv("FITALLOC_SECURE")) {
        CHECK_EQ(fa_option_get("secure"), 1);
        return -1;
    }
    const char *env[] = {"FITALLOC_SECURE=1", extra, NULL};
    fa_test_rerun("secure mode", env, argv);
    return 0;
}

/* A test of an option that is off or on: in the first run (the environment variable `option`
 * not set), run this test again with it at 0, then at 1 (and `also`, one more "NAME=value", or
 * NULL), and return -1; in a run again, return the option's value there. */
static inline int fa_test_off_on(char **argv, const char *option, const char *also)
{
    const char *value = getenv(option);
    if (value)
        return atoi(value);
    for (int on = 0; on <= 1; on++) {
        char setting[128];
        snprintf(setting, sizeof setting, "%s=%d", option, on);
        const char *env[] = {setting, also, NULL};
        fa_test_rerun(setting, env, argv);
    }
    return -1;
}

/* Run this test again twice, for the two fates of an ended thread's heap: parked (argument
 * "--parked"; with a purge delay long enough that no parked heap expires, even in a slow
 * sanitized run) and abandoned at once (argument "--abandon", FITALLOC_PARKED_HEAPS=0). */
static inline void fa_test_rerun_heap_fates(char *argv0)
{
    const char *parked_env[] = {"FITALLOC_PARKED_HEAPS", "FITALLOC_PURGE_DELAY=60000", NULL};
    char *parked_args[] = {argv0, (char *)"--parked", NULL};
    fa_test_rerun("parked heaps", parked_env, parked_args);
    const char *abandon_env[] = {"FITALLOC_PARKED_HEAPS=0", NULL};
    char *abandon_args[] = {argv0, (char *)"--abandon", NULL};
    fa_test_rerun("FITALLOC_PARKED_HEAPS=0", abandon_env, abandon_args);
}

#endif

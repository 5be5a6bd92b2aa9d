/* ctest labels: threads */
/* A process ends when its last thread ends. When main calls pthread_exit while detached
 * workers allocate (Brown CS33's test 1 does exactly this), fitalloc's purge thread must not
 * keep the process alive after the workers are done. A child does it; the parent waits up to
 * 20 s for it to end by itself and requires a clean exit. Then again in a child forked by a
 * thread other than main: there that thread is the child's main thread. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "child.h"
#include "fitalloc.h"
#include "threads.h"

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 20000; i++) {
        void *p = fa_malloc(8 * (size_t)(i % 64 + 1));
        CHECK(p != NULL);
        fa_free(p);
    }
    return NULL;
}

/* Main leaves with pthread_exit while detached workers allocate. */
static void child_main(void)
{
    fa_free(fa_malloc(100)); /* main has a heap too */
    for (int i = 0; i < 4; i++) {
        pthread_t t;
        CHECK_EQ(pthread_create(&t, NULL, worker, NULL), 0);
        CHECK_EQ(pthread_detach(t), 0);
    }
    pthread_exit(NULL);
}

static char *argv0;

/* Fork a child that runs child_main, and CHECK that it ends by itself, cleanly. */
static void fork_and_wait(void)
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        /* Under ASan the child runs the program anew: gcc 12's ASan runtime does not hold its
         * allocator's lock across fork, so a child forked while a thread runs could block in
         * its first ASan malloc. (Under TSan a new process would have TSan's own background
         * thread, which never ends.) */
        if (FA_TEST_ASAN) {
            execl("/proc/self/exe", argv0, "child", (char *)NULL);
            _exit(127);
        }
        child_main();
    }
    int status = 0;
    CHECK_MSG(fa_test_wait_ends(pid, 20, &status),
              "the process did not end after main's pthread_exit");
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
}

static void *fork_from_thread(void *arg)
{
    fork_and_wait();
    return arg;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0)
        child_main();
    argv0 = argv[0];
    fa_test_tsan_thread_before_fork();
    fork_and_wait();
    /* Not under TSan, which kills a child of a multi-threaded fork that starts threads. */
    if (!FA_TEST_TSAN)
        fa_test_on_thread(fork_from_thread, NULL);
    printf("engine/main_pthread_exit: ok\n");
    return 0;
}

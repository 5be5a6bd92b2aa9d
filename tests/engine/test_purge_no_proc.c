/* ctest labels: threads */
/* Issue 30: the purge thread when the process's threads cannot be counted. After main has left
 * with pthread_exit, the purger ends once it is the last thread, which it learns from
 * /proc/self/stat; when that file cannot be read (no /proc in a sandbox, or, as here, a worker
 * that has filled its file-descriptor table) it must end for good, not be started again by
 * every slow path (a storm of thread creations that purged nothing), and the allocator's own
 * calls must give memory back from then on.
 *
 * The test runs itself again with FITALLOC_PURGE_DELAY=50ms and forks the program: main
 * allocates, starts a worker and leaves with pthread_exit; the worker waits for main's end,
 * fills its descriptor table, works until the purger has gone (it counts the threads through
 * /proc/self/task, opened before), keeps allocating, then frees 32 MiB and works on until
 * fa_stats_get shows the memory back. Every thread the process creates is counted: the test
 * defines pthread_create, which fitalloc's purger start calls too. At most one purger may have
 * been started after main's work, and the process must end by itself after its worker. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "child.h"
#include "fitalloc.h"
#include "rerun.h"
#include "stats.h"
#include "threads.h"
#include "purge_test.h"

#define MIB (1024ul * 1024ul)
#define FILLER_MAX 64

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static unsigned creations; /* pthread_create calls in this process */

/* Defined here, this takes the place of the C library's (or the sanitizer's) pthread_create for
 * the whole program, fitalloc's purge thread included; it counts and passes the call on. */
int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    static create_fn next;
    create_fn real = __atomic_load_n(&next, __ATOMIC_ACQUIRE);
    if (!real) {
        real = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
        CHECK(real != NULL);
        __atomic_store_n(&next, real, __ATOMIC_RELEASE);
    }
    __atomic_add_fetch(&creations, 1, __ATOMIC_SEQ_CST);
    return real(thread, attr, fn, arg);
}

static unsigned creations_now(void)
{
    return __atomic_load_n(&creations, __ATOMIC_SEQ_CST);
}

/* Threads of this process, the exited main thread included (it stays until the process
 * ends), read through a descriptor of /proc/self/task opened while descriptors were left. */
static int task_count(int task_dir)
{
    char buf[4096];
    CHECK_EQ(lseek(task_dir, 0, SEEK_SET), 0);
    long n = syscall(SYS_getdents64, task_dir, buf, sizeof buf);
    CHECK(n > 0);
    int tasks = 0;
    for (long at = 0; at < n;) {
        struct dirent64 *e = (struct dirent64 *)(buf + at);
        if (e->d_name[0] != '.')
            tasks++;
        at += e->d_reclen;
    }
    return tasks;
}

static unsigned creations_before_worker;

/* Wait until the main thread has ended (its exit hooks run): a zombie in /proc. Not with
 * pthread_join, which ThreadSanitizer does not support on the main thread of a fork child. */
static void wait_for_main_end(void)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)getpid());
    double start = now_s();
    for (;;) {
        char buf[512];
        int fd = open(path, O_RDONLY);
        CHECK(fd >= 0);
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        CHECK(n > 0);
        buf[n] = 0;
        const char *state = strrchr(buf, ')'); /* the state follows the command name */
        CHECK(state != NULL);
        if (state[2] == 'Z')
            return;
        CHECK_MSG(now_s() < start + 20, "the main thread did not end in 20 s");
        struct timespec pause = {0, 1000 * 1000};
        nanosleep(&pause, NULL);
    }
}

static void *worker(void *arg)
{
    (void)arg;
    wait_for_main_end();
    int task_dir = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    CHECK(task_dir >= 0);

    /* Fill the descriptor table: /proc/self/stat cannot be opened any more. */
    struct rlimit limit;
    CHECK_EQ(getrlimit(RLIMIT_NOFILE, &limit), 0);
    limit.rlim_cur = FILLER_MAX;
    CHECK_EQ(setrlimit(RLIMIT_NOFILE, &limit), 0);
    int filler[FILLER_MAX], fillers = 0;
    while (fillers < FILLER_MAX && (filler[fillers] = open("/dev/null", O_RDONLY)) >= 0)
        fillers++;
    CHECK_EQ(open("/proc/self/stat", O_RDONLY), -1);
    CHECK_EQ(errno, EMFILE);

    /* Work until the purger has ended (the main thread and this one are left). */
    fa_rng r;
    fa_rng_seed(&r, 30);
    double start = now_s();
    while (task_count(task_dir) > 2) {
        CHECK_MSG(now_s() < start + 20, "the purge thread did not end in 20 s of work");
        /* A descriptor the purger held while the table was filled (it opens /proc/self/stat
         * to count the threads) is free again once it closes it: take it too, else the purger
         * finds it free at every look (seen under ThreadSanitizer, which slows the fill). */
        int fd;
        while (fillers < FILLER_MAX && (fd = open("/dev/null", O_RDONLY)) >= 0)
            filler[fillers++] = fd;
        busy_work(&r, 256);
    }
    /* Then go on for a while: each of these slow paths used to start a purger again. */
    double until = now_s() + 0.3;
    for (int rounds = 0; rounds < 1000 || now_s() < until; rounds++)
        busy_work(&r, 256);
    unsigned purgers = creations_now() - creations_before_worker - 1;
    CHECK_MSG(purgers <= 1, "%u purge threads started after main's work", purgers);

    /* With the purger gone, the allocator's calls give freed memory back. */
    uint64_t committed_before = fa_test_stats().committed;
    size_t total = 32 * MIB, nblocks = 0, got = 0;
    void *blocks[8192];
    while (got < total) {
        size_t n = 8192 + (size_t)fa_rng_below(&r, 56 * 1024);
        CHECK(nblocks < sizeof blocks / sizeof *blocks);
        blocks[nblocks] = fa_malloc(n);
        CHECK(blocks[nblocks] != NULL);
        memset(blocks[nblocks++], 0x5a, n);
        got += n;
    }
    uint64_t committed_peak = fa_test_stats().committed;
    CHECK_GE(committed_peak, total);
    for (size_t i = 0; i < nblocks; i++)
        fa_free(blocks[i]);
    uint64_t committed = committed_peak;
    start = now_s();
    while (committed >= committed_before + 8 * MIB && now_s() < start + 20) {
        for (int i = 0; i < 16; i++)
            busy_work(&r, 256);
        committed = fa_test_stats().committed;
    }
    CHECK_MSG(committed < committed_before + 8 * MIB,
              "committed %llu bytes 20 s after freeing 32 MiB (before them %llu, peak %llu)",
              (unsigned long long)committed, (unsigned long long)committed_before,
              (unsigned long long)committed_peak);
    CHECK_EQ(task_count(task_dir), 2);
    purgers = creations_now() - creations_before_worker - 1;
    CHECK_MSG(purgers <= 1, "%u purge threads started after main's work", purgers);

    for (int i = 0; i < fillers; i++)
        close(filler[i]);
    close(task_dir);
    printf("engine/purge_no_proc: ok (%u purge thread start(s) after main's work, committed "
           "%llu -> %llu -> %llu KiB)\n",
           purgers, (unsigned long long)(committed_before >> 10),
           (unsigned long long)(committed_peak >> 10), (unsigned long long)(committed >> 10));
    fflush(stdout);
    return NULL; /* the last thread: the process ends, with status 0 */
}

static void child_main(void)
{
    CHECK_EQ(fa_option_get("purge_thread"), 1);
    CHECK_EQ(fa_option_get("purge_delay"), 50);
    fa_rng r;
    fa_rng_seed(&r, 1);
    for (int i = 0; i < 64; i++)
        busy_work(&r, 256); /* in a fork child, the purger starts again at a slow path */
    creations_before_worker = creations_now();
    leave_main_to(worker);
}

int main(int argc, char **argv)
{
    return purge_test_exit_main(argc, argv, child_main, "the purge thread without a thread count",
                                "engine/purge_no_proc");
}

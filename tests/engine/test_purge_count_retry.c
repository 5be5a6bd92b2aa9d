/* ctest labels: threads */
/* Issue 40, item 7: a count of the threads that fails for a passing shortage of descriptors
 * must not stop the purge thread for good. After main has left with pthread_exit, the purger
 * counts the threads (/proc/self/stat) to know when it is the last one; here that count fails
 * for a while (RLIMIT_NOFILE lowered to the descriptors open), then works again (the limit
 * raised back). The purger must still be there afterwards: a worker frees 32 MiB and then makes
 * no allocator call, and the memory must go back to the OS. A purger that retired at the first
 * failed count would leave it committed for good. The process must then end by itself after
 * its worker (the purger is the last thread, and ends).
 *
 * The test runs itself again with FITALLOC_PURGE_DELAY=50ms and forks the program, so that its
 * end can be waited for with a timeout. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/resource.h>
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

static struct rlimit saved_limit;

static void sleep_ms(long ms)
{
    struct timespec pause = {ms / 1000, (ms % 1000) * 1000 * 1000};
    nanosleep(&pause, NULL);
}

static void *worker(void *arg)
{
    (void)arg;
    /* Main ends meanwhile, and the purger, woken by its end, tries to count: it fails while
     * no descriptor can be opened. */
    sleep_ms(400);
    CHECK_EQ(open("/proc/self/stat", O_RDONLY), -1);
    CHECK_EQ(errno, EMFILE);
    CHECK_EQ(setrlimit(RLIMIT_NOFILE, &saved_limit), 0);

    uint64_t before = fa_test_stats().committed;
    void *blocks[32];
    for (int i = 0; i < 32; i++) {
        blocks[i] = fa_malloc(MIB);
        CHECK(blocks[i] != NULL);
        memset(blocks[i], 0x5a, MIB);
    }
    for (int i = 0; i < 32; i++)
        fa_free(blocks[i]);
    /* No allocator call from here (fa_stats_get makes none): only the purger gives back. */
    double start = now_s();
    uint64_t committed = fa_test_stats().committed;
    while (committed >= before + 8 * MIB && now_s() < start + 10) {
        sleep_ms(10);
        committed = fa_test_stats().committed;
    }
    CHECK_MSG(committed < before + 8 * MIB,
              "committed %llu bytes 10 s after freeing 32 MiB (before them %llu): the purge "
              "thread stopped at a failed count",
              (unsigned long long)committed, (unsigned long long)before);
    return NULL; /* the last thread but the purger: the process ends, with status 0 */
}

static void *leave_at_once(void *arg)
{
    pthread_exit(arg);
}

static void program(void)
{
    CHECK_EQ(fa_option_get("purge_delay"), 50);
    fa_free(fa_malloc(8 * MIB)); /* the purge thread starts */
    /* pthread_exit loads the unwinder (libgcc_s) at its first call: before the limit below. */
    pthread_t first;
    CHECK_EQ(pthread_create(&first, NULL, leave_at_once, NULL), 0);
    CHECK_EQ(pthread_join(first, NULL), 0);
    /* No descriptor beyond those open now. */
    CHECK_EQ(getrlimit(RLIMIT_NOFILE, &saved_limit), 0);
    int lowest = open("/dev/null", O_RDONLY);
    CHECK(lowest >= 0);
    close(lowest);
    struct rlimit low = saved_limit;
    low.rlim_cur = (rlim_t)lowest;
    CHECK_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
    leave_main_to(worker);
}

int main(int argc, char **argv)
{
    return purge_test_exit_main(argc, argv, program,
                                "the purge thread after a failed count of threads",
                                "engine/purge_count_retry");
}

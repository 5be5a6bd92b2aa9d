/* ctest labels: threads */
/* A thread that holds blocks while the main thread forks is gone in the child, and a new
 * thread there may get its descriptor, so its thread pointer (the C library puts the ended
 * threads' stacks in its cache): that thread must free the blocks as another thread's, and
 * the page stays its old heap's, all of its blocks counted in use (the frees wait on the page
 * for a heap that will never collect them in the child). Taken for the new thread's own, those
 * frees would empty the page into a heap that does not hold it. The test checks that the new
 * thread did get the old descriptor (pthread_self), so that it tests what it says.
 * Not run under TSan, whose own thread registry aborts on exactly this ("dup thread with used
 * id"), nor on aarch64 under qemu-user, which aborts a fork made while another thread runs:
 * tests/qemu-excluded.txt. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "thread_pointer.h"

static pthread_barrier_t forked;

static void *hold_until_forked(void *arg)
{
    hold_blocks();
    pthread_barrier_wait(&forked); /* held */
    pthread_barrier_wait(&forked); /* the main thread has forked */
    return arg;
}

static void after_fork(void)
{
    CHECK_EQ(pthread_barrier_init(&forked, NULL, 2), 0);
    pthread_t t = start_thread(hold_until_forked, 1 << 20);
    pthread_barrier_wait(&forked);
    uintptr_t owner = page_of(held[0]).owner;
    CHECK_NE(owner, 0);
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        run_thread(free_held);
        CHECK(pthread_equal(freer_self, holder_self));
        struct page_seen after = page_of(held[0]);
        CHECK_EQ(after.owner, owner);
        CHECK_EQ(after.used, BLOCKS);
        _exit(0);
    }
    int status = 0;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the fork child failed (status %d)",
              status);
    pthread_barrier_wait(&forked);
    CHECK_EQ(pthread_join(t, NULL), 0);
    pthread_barrier_destroy(&forked);
    for (int i = 0; i < BLOCKS; i++)
        fa_free(held[i]);
}

int main(void)
{
    if (FA_TEST_TSAN) {
        printf("engine/thread_pointer_fork: skipped (TSan aborts a thread that reuses the "
               "descriptor of one alive at the fork)\n");
        return 77;
    }
    after_fork();
    printf("engine/thread_pointer_fork: ok\n");
    return 0;
}

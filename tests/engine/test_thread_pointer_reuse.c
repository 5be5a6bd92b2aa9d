/* ctest labels: threads */
/* A new thread may get the thread pointer of a thread that has ended (the C library reuses its
 * stack and descriptor), and the free fast path tells a thread's own pages by that pointer: a
 * new thread must still free an ended thread's blocks as another thread's. Each case checks
 * that the new thread did get the old descriptor (pthread_self), so that it tests what it says.
 *   parked: a thread ends holding blocks, and its heap is parked; a second thread, started
 *         before and with a smaller stack, ends after it, its heap parked last; a third, with
 *         the first one's stack size (so it gets that stack), takes the second's heap (the one
 *         parked last) and frees the first thread's blocks: they wait on their page for its
 *         heap's next thread, so the page keeps them all counted in use, and its owner;
 *   abandoned: the same with FITALLOC_PARKED_HEAPS=0, the third thread only freeing: the
 *         first heap is abandoned at once, and the page keeps its blocks in use, no owner;
 * Taken for the new thread's own, those frees would empty the page into a heap that does not
 * hold it, and the page would no longer be in use. test_thread_pointer_fork.c: the same in a
 * fork child. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rerun.h"
#include "thread_pointer.h"

/* No 1 s sleep at the exit of each of the test's processes (every thread is joined by then). */
FA_TEST_TSAN_OPTIONS("atexit_sleep_ms=0")

static void *hold(void *arg)
{
    hold_blocks();
    return arg;
}

static pthread_barrier_t holder_ended;

static void *malloc_until_holder_ended(void *arg)
{
    fa_free(fa_malloc(200)); /* a heap of its own */
    /* Once before the holder starts, so that the heap visits see this thread's pages set up
     * (a snapshot of pages changing meanwhile is a data race under TSan). */
    pthread_barrier_wait(&holder_ended);
    pthread_barrier_wait(&holder_ended);
    return arg;
}

static void *malloc_then_free_held(void *arg)
{
    fa_free(fa_malloc(200)); /* takes the heap parked last */
    return free_held(arg);
}

static void after_exit(bool parked)
{
    CHECK_EQ(pthread_barrier_init(&holder_ended, NULL, 2), 0);
    pthread_t other = start_thread(malloc_until_holder_ended, 256 << 10);
    pthread_barrier_wait(&holder_ended);
    run_thread(hold);
    uintptr_t owner = page_of(held[0]).owner;
    CHECK(parked ? owner != 0 : owner == 0);
    pthread_barrier_wait(&holder_ended);
    CHECK_EQ(pthread_join(other, NULL), 0);
    pthread_barrier_destroy(&holder_ended);
    /* (Where heaps are abandoned, a malloc would adopt the first thread's page: its blocks
     * would be the new thread's own.) */
    run_thread(parked ? malloc_then_free_held : free_held);
    CHECK(pthread_equal(freer_self, holder_self));
    struct page_seen after = page_of(held[0]);
    CHECK_EQ(after.owner, owner);
    CHECK_EQ(after.used, BLOCKS);
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        after_exit(strcmp(argv[1], "parked") == 0);
        return 0;
    }
    /* A purge delay long enough that no parked heap is abandoned, even in a slow sanitized run. */
    const char *parked_env[] = {"FITALLOC_PARKED_HEAPS", "FITALLOC_PURGE_DELAY=60000", NULL};
    char *parked_args[] = {argv[0], (char *)"parked", NULL};
    fa_test_rerun("parked", parked_env, parked_args);
    /* No purge pass either, which would collect the frees waiting in the abandoned page and
     * release it (before the check, at times, in a sanitized run). */
    const char *abandoned_env[] = {"FITALLOC_PARKED_HEAPS=0", "FITALLOC_PURGE_THREAD=0",
                                   "FITALLOC_PURGE_DELAY=60000", NULL};
    char *abandoned_args[] = {argv[0], (char *)"abandoned", NULL};
    fa_test_rerun("abandoned", abandoned_env, abandoned_args);
    printf("engine/thread_pointer_reuse: ok\n");
    return 0;
}

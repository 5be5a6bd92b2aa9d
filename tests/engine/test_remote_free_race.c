/* ctest labels: threads */
/* Regression: a remote free reads its page's owner word after pushing the block, and by then
 * the owner may have collected the block, emptied the page and given the segment away. With
 * no segment cache and no purge delay, segments go back at once; the test re-executes itself
 * with those options (they are read at start) and churns cross-thread frees while pages empty.
 * It used to crash with SIGSEGV; it must finish and keep every block intact. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fitalloc.h"

enum { PAIRS = 2, BATCH = 512 };

struct channel {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    void *blocks[BATCH];
    size_t sizes[BATCH];
    int full; /* a batch waits for the consumer */
    int done;
};

static struct channel channels[PAIRS];
static unsigned rounds;

static void *producer(void *arg)
{
    struct channel *ch = arg;
    fa_rng r;
    fa_rng_seed(&r, (uint64_t)(uintptr_t)arg);
    for (unsigned round = 0; round < rounds; round++) {
        pthread_mutex_lock(&ch->lock);
        while (ch->full)
            pthread_cond_wait(&ch->changed, &ch->lock);
        for (int i = 0; i < BATCH; i++) {
            size_t n = 16 + fa_rng_below(&r, 2000);
            ch->blocks[i] = fa_malloc(n);
            CHECK(ch->blocks[i] != NULL);
            memset(ch->blocks[i], (int)(n & 0xff), n);
            ch->sizes[i] = n;
        }
        ch->full = 1;
        pthread_cond_signal(&ch->changed);
        pthread_mutex_unlock(&ch->lock);
    }
    pthread_mutex_lock(&ch->lock);
    ch->done = 1;
    pthread_cond_signal(&ch->changed);
    pthread_mutex_unlock(&ch->lock);
    return NULL;
}

static void *consumer(void *arg)
{
    struct channel *ch = arg;
    for (;;) {
        pthread_mutex_lock(&ch->lock);
        while (!ch->full && !ch->done)
            pthread_cond_wait(&ch->changed, &ch->lock);
        if (!ch->full) {
            pthread_mutex_unlock(&ch->lock);
            return NULL;
        }
        for (int i = 0; i < BATCH; i++) {
            unsigned char *p = ch->blocks[i];
            CHECK(p[0] == (unsigned char)(ch->sizes[i] & 0xff));
            CHECK(p[ch->sizes[i] - 1] == (unsigned char)(ch->sizes[i] & 0xff));
            fa_free(p); /* always a remote free: the producer allocated it */
        }
        ch->full = 0;
        pthread_cond_signal(&ch->changed);
        pthread_mutex_unlock(&ch->lock);
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    if (!getenv("FA_TEST_RACE_CHILD")) {
        setenv("FA_TEST_RACE_CHILD", "1", 1);
        setenv("FITALLOC_SEGMENT_CACHE", "0", 1);
        setenv("FITALLOC_PURGE_DELAY", "0", 1);
        execv("/proc/self/exe", argv);
        CHECK_MSG(0, "re-exec failed");
    }
    CHECK_EQ(fa_option_get("segment_cache"), 0);
    CHECK_EQ(fa_option_get("purge_delay"), 0);
    rounds = 400 * fa_test_scale();
    /* Fresh producer threads each time: their heaps are abandoned with blocks still in flight. */
    for (int wave = 0; wave < 5; wave++) {
        pthread_t threads[2 * PAIRS];
        for (int i = 0; i < PAIRS; i++) {
            channels[i] = (struct channel){.lock = PTHREAD_MUTEX_INITIALIZER,
                                           .changed = PTHREAD_COND_INITIALIZER};
            CHECK_EQ(pthread_create(&threads[2 * i], NULL, producer, &channels[i]), 0);
            CHECK_EQ(pthread_create(&threads[2 * i + 1], NULL, consumer, &channels[i]), 0);
        }
        for (int i = 0; i < 2 * PAIRS; i++)
            CHECK_EQ(pthread_join(threads[i], NULL), 0);
    }
    printf("engine/remote_free_race: ok\n");
    return 0;
}

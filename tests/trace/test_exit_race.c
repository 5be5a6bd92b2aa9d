/* FITALLOC_TRACE when the process exits while its threads are still recording: the exit
 * handler writes every thread's buffer while the threads go on appending to them. The test
 * runs itself again with FITALLOC_TRACE set; there 3 threads loop on fa_malloc / fa_free of
 * random sizes and hand blocks to each other, and once each has made 20,000 calls (several
 * buffers each) main calls exit() with the threads still running. Back in the first process,
 * the trace must be whole: a valid header, every block's tag and checksum right and its
 * records decoded exactly up to its end, each thread's blocks numbered one after the other
 * from 0 (nothing lost, nothing twice) and its records' times growing, records of all three
 * threads, and at least the 60,000 calls made before exit(). Only the last block may be cut
 * short (a thread killed in the middle of a write as the process ended). Also run in the ASan
 * and TSan builds: TSan sees the flush of a buffer its owner is still filling, and the
 * decoding of its records that gives the next block's start. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "rerun.h"
#include "fitalloc-trace.h"
#include "fitalloc.h"

/* No 1 s sleep at the exit of each process; the threads left running at exit are the test. */
FA_TEST_TSAN_OPTIONS("atexit_sleep_ms=0:report_thread_leaks=0")

#define THREADS 3
#define SLOTS 32

static atomic_ulong calls[THREADS];
static _Atomic(void *) handed[THREADS];

static void *worker(void *arg)
{
    unsigned t = (unsigned)(uintptr_t)arg;
    uint64_t rng = 0x2545f4914f6cdd1dull * (t + 1);
    void *slots[SLOTS] = {0};
    for (;;) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        unsigned slot = (unsigned)(rng % SLOTS);
        fa_free(slots[slot]);
        slots[slot] = fa_malloc(1 + (rng >> 16) % 3000);
        unsigned made = 2;
        if (rng % 7 == 0) { /* hand a block to the next thread, free what was handed to us */
            fa_free(atomic_exchange(&handed[t], NULL));
            fa_free(atomic_exchange(&handed[(t + 1) % THREADS], slots[slot]));
            slots[slot] = NULL;
            made += 2;
        }
        /* Counted once recorded: the exit handler runs after main has seen the count. */
        atomic_fetch_add(&calls[t], made);
    }
    return NULL;
}

static int traced_child(void)
{
    fa_free(fa_malloc(1)); /* main is thread 0 also where malloc is the sanitizer's */
    for (unsigned t = 0; t < THREADS; t++) {
        pthread_t thread;
        CHECK_EQ(pthread_create(&thread, NULL, worker, (void *)(uintptr_t)t), 0);
        CHECK_EQ(pthread_detach(thread), 0);
    }
    for (unsigned t = 0; t < THREADS; t++)
        while (atomic_load(&calls[t]) < 20000)
            usleep(1000);
    exit(0); /* with the threads still running */
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--child"))
        return traced_child();

    char path[] = "/tmp/fitalloc-trace-exit-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    fflush(NULL);
    char trace_env[600];
    snprintf(trace_env, sizeof trace_env, "FITALLOC_TRACE=%s", path);
    const char *env[] = {trace_env, "FITALLOC_MODE", NULL};
    char *args[] = {argv[0], (char *)"--child", NULL};
    pid_t pid = fa_test_rerun("the traced process", env, args);

    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    CHECK_EQ(fseek(f, 0, SEEK_END), 0);
    long size = ftell(f);
    CHECK(size >= (long)sizeof(struct fa_trace_header));
    rewind(f);
    unsigned char *data = malloc((size_t)size);
    CHECK(data != NULL);
    CHECK_EQ(fread(data, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    unlink(path);

    struct fa_trace_header h;
    memcpy(&h, data, sizeof h);
    CHECK(!memcmp(h.magic, FA_TRACE_MAGIC, sizeof h.magic));
    CHECK_EQ(h.version, FA_TRACE_VERSION);
    CHECK_EQ(h.header_size, sizeof(struct fa_trace_header));
    CHECK_EQ(h.block_header_size, sizeof(struct fa_trace_block));
    CHECK_EQ(h.pid, (uint32_t)pid);

    /* Every block: its tag, its checksum (all but a last one cut short), its records decoded
     * exactly up to its end. */
    size_t count = 0, blocks = 0, cut = 0;
    uint64_t *next = calloc(4096, sizeof *next); /* per thread: its next record's number */
    uint64_t *last_time = calloc(4096, sizeof *last_time); /* and its last record's time */
    CHECK(next != NULL && last_time != NULL);
    uint32_t threads = 0;
    size_t at = sizeof h;
    while (at < (size_t)size) {
        struct fa_trace_block b;
        if ((size_t)size - at < sizeof b) {
            cut = (size_t)size - at;
            break;
        }
        memcpy(&b, data + at, sizeof b);
        CHECK_MSG(b.tag == FA_TRACE_BLOCK_TAG, "byte %zu: block %zu: tag %#x", at, blocks, b.tag);
        const uint8_t *p = data + at + sizeof b, *end = p + b.bytes;
        bool whole = b.bytes <= (size_t)size - at - sizeof b;
        if (whole)
            CHECK_MSG(fa_trace_block_checksum(&b, p) == b.checksum,
                      "byte %zu: block %zu: bad checksum", at, blocks);
        else
            end = data + size;
        CHECK_MSG(b.thread < 4096, "block %zu: thread %u", blocks, b.thread);
        CHECK_MSG(b.index == next[b.thread], "block %zu: thread %u from record %llu, not %llu",
                  blocks, b.thread, (unsigned long long)b.index,
                  (unsigned long long)next[b.thread]);
        struct fa_trace_state state = fa_trace_block_state(&b);
        for (uint32_t i = 0; i < b.records; i++) {
            struct fa_trace_record r;
            int rc = fa_trace_decode(&state, &p, end, &r);
            if (rc == FA_TRACE_CUT && !whole)
                break;
            CHECK_MSG(rc == FA_TRACE_DECODED, "block %zu, record %u: %d", blocks, i, rc);
            CHECK_MSG(next[b.thread] == 0 || last_time[b.thread] < r.time_ns,
                      "thread %u: time %llu after %llu in the file", b.thread,
                      (unsigned long long)r.time_ns, (unsigned long long)last_time[b.thread]);
            last_time[b.thread] = r.time_ns;
            next[b.thread]++;
            count++;
        }
        if (b.thread >= threads)
            threads = b.thread + 1;
        blocks++;
        if (!whole) {
            cut = (size_t)(end - p);
            break;
        }
        CHECK_MSG(p == end, "block %zu: %zu bytes after its records", blocks - 1,
                  (size_t)(end - p));
        at += sizeof b + b.bytes;
    }
    CHECK_MSG(count >= 60000, "only %zu records", count);
    CHECK_MSG(threads >= THREADS + 1, "records of %u threads", threads);
    printf("trace/exit_race: ok (%zu records in %zu blocks of %u threads, %zu bytes cut short)\n",
           count, blocks, threads, cut);
    free(next);
    free(last_time);
    free(data);
    return 0;
}

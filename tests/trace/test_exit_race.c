/* FITALLOC_TRACE when the process exits while its threads are still recording: the exit
 * handler writes every thread's buffer while the threads go on appending to them. The test
 * runs itself again with FITALLOC_TRACE set; there 3 threads loop on fa_malloc / fa_free of
 * random sizes and hand blocks to each other, and once each has made 20,000 calls (several
 * buffers each) main calls exit() with the threads still running. Back in the first process,
 * the trace must be whole: a valid header, every complete record's check byte right and its
 * op known, no seq twice, each thread's records in the file in increasing seq, records of all
 * three threads, and at least the 60,000 calls made before exit(). At most the last record may be cut short (a thread killed in the
 * middle of a write as the process ended). Also run in the ASan and TSan builds: TSan sees
 * the flush of a buffer its owner is still filling. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "fitalloc-trace.h"
#include "fitalloc.h"

#if FA_TEST_TSAN
/* No 1 s sleep at the exit of each process; the threads left running at exit are the test. */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
    return "atexit_sleep_ms=0:report_thread_leaks=0";
}
#endif

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

struct rec {
    uint64_t seq;
    uint32_t thread;
};

static int by_seq(const void *a, const void *b)
{
    uint64_t x = ((const struct rec *)a)->seq, y = ((const struct rec *)b)->seq;
    return x < y ? -1 : x > y;
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
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        setenv("FITALLOC_TRACE", path, 1);
        unsetenv("FITALLOC_MODE");
        char *args[] = {argv[0], (char *)"--child", NULL};
        execv("/proc/self/exe", args);
        _exit(127);
    }
    int status = 0;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the traced process: status %#x",
              status);

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
    CHECK_EQ(h.record_size, sizeof(struct fa_trace_record));
    CHECK_EQ(h.pid, (uint32_t)pid);
    size_t count = ((size_t)size - sizeof h) / sizeof(struct fa_trace_record);
    CHECK_MSG(count >= 60000, "only %zu records", count);

    struct rec *recs = malloc(count * sizeof *recs);
    uint64_t *last_seq = calloc(4096, sizeof *last_seq); /* per thread: its last seq + 1 */
    CHECK(recs != NULL && last_seq != NULL);
    uint32_t threads = 0;
    for (size_t i = 0; i < count; i++) {
        struct fa_trace_record r;
        memcpy(&r, data + sizeof h + i * sizeof r, sizeof r);
        CHECK_MSG(r.check == fa_trace_check(&r), "record %zu: bad check byte", i);
        CHECK_MSG(r.op >= 1 && r.op <= FA_TRACE_OP_MAX, "record %zu: op %u", i, r.op);
        CHECK_MSG(r.thread < 4096, "record %zu: thread %u", i, r.thread);
        CHECK_MSG(last_seq[r.thread] <= r.seq, "thread %u: seq %llu after %llu in the file",
                  r.thread, (unsigned long long)r.seq, (unsigned long long)last_seq[r.thread] - 1);
        last_seq[r.thread] = r.seq + 1;
        if (r.thread >= threads)
            threads = r.thread + 1;
        recs[i] = (struct rec){r.seq, r.thread};
    }
    CHECK_MSG(threads >= THREADS + 1, "records of %u threads", threads);
    qsort(recs, count, sizeof *recs, by_seq);
    for (size_t i = 1; i < count; i++)
        CHECK_MSG(recs[i].seq != recs[i - 1].seq, "seq %llu twice",
                  (unsigned long long)recs[i].seq);
    printf("trace/exit_race: ok (%zu records of %u threads, %zu bytes of a partial record)\n",
           count, threads, ((size_t)size - sizeof h) % sizeof(struct fa_trace_record));
    free(recs);
    free(last_seq);
    free(data);
    return 0;
}

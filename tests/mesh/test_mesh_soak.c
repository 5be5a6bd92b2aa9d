/* A soak of meshing: worker threads allocate, rewrite and free blocks of random small sizes at
 * random, swinging between a full and a sparse heap (pages go to the mesher and are merged
 * while the threads keep writing and freeing, some blocks freed by another thread), while
 * the main thread forks again and again: each child checks every block, reads each into a
 * pipe and refills some of them by a read() (system calls on meshed memory), then frees them
 * all. Every block's contents are checked at its free, in every child, and at the end. 6 s at
 * the smoke size, 60 s at the real size (FITALLOC_TEST_SIZE=real); a pass every 20 ms. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/userfaultfd.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "fitalloc.h"
#include "stats.h"

#define WORKERS 3
#define EXCHANGE 1024 /* blocks one thread leaves for another to free */

struct slot {
    char *p;
    size_t size;
    uint64_t tag;
};

struct worker {
    pthread_mutex_t lock; /* held while the worker changes its slots; the forking thread takes it */
    struct slot *slots;
    size_t count;
    fa_rng rng;
    uint64_t id;
    pthread_t thread;
};

static struct worker workers[WORKERS];
static struct slot exchange[EXCHANGE];
static size_t exchanged;
static pthread_mutex_t exchange_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int stop;
static unsigned phase_ms;

static uint64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

static void check_slot(const struct slot *s)
{
    CHECK_MSG(fa_pattern_find_bad(s->p, s->size, s->tag) == (size_t)-1,
              "block %p (%zu bytes, tag %llx) lost its data", (void *)s->p, s->size,
              (unsigned long long)s->tag);
}

static void release(struct slot *s)
{
    check_slot(s);
    fa_free(s->p);
    s->p = NULL;
}

/* One operation on a random slot: fill an empty one, or rewrite, free, or hand over a live
 * one; `free_per_16` sets how full the heap tends to be. */
static void operate(struct worker *w, unsigned free_per_16)
{
    struct slot *s = &w->slots[fa_rng_below(&w->rng, w->count)];
    if (!s->p) {
        s->size = fa_rng_below(&w->rng, 8) ? 16 + fa_rng_below(&w->rng, 497)
                                           : 16 + fa_rng_below(&w->rng, 4081);
        s->p = fa_malloc(s->size);
        CHECK(s->p);
        s->tag = fa_rng_next(&w->rng);
        fa_pattern_fill(s->p, s->size, s->tag);
        return;
    }
    uint64_t r = fa_rng_below(&w->rng, 16);
    if (r >= free_per_16) {
        if (r == 15) { /* rewritten in place: a write into a page that may be meshed */
            check_slot(s);
            s->tag = fa_rng_next(&w->rng);
            fa_pattern_fill(s->p, s->size, s->tag);
        }
        return;
    }
    if (r == 0) { /* left for another thread to free */
        pthread_mutex_lock(&exchange_lock);
        bool kept = exchanged < EXCHANGE;
        if (kept)
            exchange[exchanged++] = *s;
        pthread_mutex_unlock(&exchange_lock);
        if (kept) {
            s->p = NULL;
            return;
        }
    }
    release(s);
}

/* Frees blocks other threads left: remote frees, into pages that may be meshed. */
static void free_exchanged(struct worker *w)
{
    pthread_mutex_lock(&exchange_lock);
    for (size_t n = fa_rng_below(&w->rng, 64); n && exchanged; n--)
        release(&exchange[--exchanged]);
    pthread_mutex_unlock(&exchange_lock);
}

static void *work(void *arg)
{
    struct worker *w = arg;
    uint64_t start = now_ms();
    while (!atomic_load(&stop)) {
        /* Full and sparse phases in turn: a sparse heap's pages are what the mesher takes. */
        bool sparse = (now_ms() - start) / phase_ms % 2;
        pthread_mutex_lock(&w->lock);
        for (int i = 0; i < 256; i++)
            operate(w, sparse ? 14 : 2);
        pthread_mutex_unlock(&w->lock);
        free_exchanged(w);
    }
    return NULL;
}

/* In a fork child: every block checked, read by the kernel (written into a pipe), every 8th
 * refilled by the kernel (a read into it), checked again, and all freed. */
static int child_checks(void)
{
    int fds[2];
    if (pipe(fds) != 0)
        return 2;
    char buf[4096 + 16];
    for (size_t t = 0; t < WORKERS + 1; t++) {
        struct slot *slots = t < WORKERS ? workers[t].slots : exchange;
        size_t n = t < WORKERS ? workers[t].count : exchanged;
        for (size_t i = 0; i < n; i++) {
            struct slot *s = &slots[i];
            if (!s->p)
                continue;
            /* The kernel reads the block first (before any touch of ours), then we do. */
            size_t part = s->size < 64 ? s->size : 64;
            if (write(fds[1], s->p, part) != (ssize_t)part ||
                read(fds[0], buf, part) != (ssize_t)part)
                return errno == EFAULT ? 4 : 5;
            if (fa_pattern_find_bad(buf, part, s->tag) != (size_t)-1 ||
                fa_pattern_find_bad(s->p, s->size, s->tag) != (size_t)-1)
                return 3;
            if (i % 8 == 0) {
                uint64_t tag = s->tag ^ 0x5a5a;
                fa_pattern_fill(buf, s->size, tag);
                if (write(fds[1], buf, s->size) != (ssize_t)s->size ||
                    read(fds[0], s->p, s->size) != (ssize_t)s->size)
                    return errno == EFAULT ? 4 : 5;
                if (fa_pattern_find_bad(s->p, s->size, tag) != (size_t)-1)
                    return 3;
            }
            fa_free(s->p);
        }
    }
    return 0;
}

static void fork_and_check(void)
{
    for (size_t t = 0; t < WORKERS; t++)
        pthread_mutex_lock(&workers[t].lock);
    pthread_mutex_lock(&exchange_lock);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
        _exit(child_checks());
    pthread_mutex_unlock(&exchange_lock);
    for (size_t t = 0; t < WORKERS; t++)
        pthread_mutex_unlock(&workers[t].lock);
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "fork child: %s %d (3: data, 4: EFAULT, 5: short read or write)",
              WIFEXITED(status) ? "exit" : "signal",
              WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

/* Whether this process may have a userfaultfd that catches the kernel's writes (merges need
 * it: decision 023). */
static bool merges_possible(void)
{
    int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
    if (fd < 0) {
        int dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
        fd = dev >= 0 ? ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC) : -1;
        if (dev >= 0)
            close(dev);
    }
    if (fd >= 0)
        close(fd);
    return fd >= 0;
}

int main(int argc, char **argv)
{
    if (FA_TEST_SANITIZED) {
        puts("mesh/mesh_soak: skipped under a sanitizer (meshing is off under ASan; TSan cannot "
             "follow the forks of a threaded program)");
        return 77;
    }
    if (argc < 2) {
        /* Again in a process with meshing on and frequent passes (exec: a skip is ours). */
        CHECK_EQ(setenv("FITALLOC_MESH", "1", 1), 0);
        CHECK_EQ(setenv("FITALLOC_MESH_PERIOD", "20", 1), 0);
        char *args[] = {argv[0], (char *)"soak", NULL};
        execv("/proc/self/exe", args);
        return 127;
    }
    CHECK_EQ(fa_option_get("MESH"), 1);
    if (!merges_possible()) {
        puts("mesh/mesh_soak: skipped: no userfaultfd here, so no merge (decision 023)");
        return 77;
    }
    unsigned seconds = 6 * fa_test_scale();
    phase_ms = 1500;
    for (size_t t = 0; t < WORKERS; t++) {
        struct worker *w = &workers[t];
        w->count = fa_test_ops(20000);
        w->slots = fa_calloc(w->count, sizeof *w->slots);
        CHECK(w->slots);
        fa_rng_seed(&w->rng, 1000 + t);
        CHECK_EQ(pthread_mutex_init(&w->lock, NULL), 0);
        CHECK_EQ(pthread_create(&w->thread, NULL, work, w), 0);
    }
    uint64_t end = now_ms() + seconds * 1000ull;
    unsigned forks = 0;
    while (now_ms() < end) {
        struct timespec pause = {0, 250 * 1000 * 1000};
        nanosleep(&pause, NULL);
        fork_and_check();
        forks++;
    }
    atomic_store(&stop, 1);
    for (size_t t = 0; t < WORKERS; t++)
        CHECK_EQ(pthread_join(workers[t].thread, NULL), 0);
    struct fa_stats s = fa_test_stats();
    printf("mesh/mesh_soak: %u s, %u forks, %llu merges\n", seconds, forks,
           (unsigned long long)s.mesh_merges);
    CHECK_MSG(s.mesh_merges > 0, "no merge in %u s", seconds);
    for (size_t t = 0; t < WORKERS; t++) {
        for (size_t i = 0; i < workers[t].count; i++)
            if (workers[t].slots[i].p)
                release(&workers[t].slots[i]);
        fa_free(workers[t].slots);
    }
    while (exchanged)
        release(&exchange[--exchanged]);
    return 0;
}

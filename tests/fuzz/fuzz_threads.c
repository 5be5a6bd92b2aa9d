/* libFuzzer target: 2 to 4 threads run programs of fa_* calls at the same time, and hand blocks
 * to each other, so that blocks are freed, resized and checked by threads that did not allocate
 * them (remote frees, the lab's per-thread heaps and arenas). The fast engine, or the lab under
 * any FITALLOC_LOCK (tests/fuzz/fuzz.cmake runs each).
 *
 * Input: byte 0 chooses the number of threads (2 + b % 3); the rest is cut into that many equal
 * parts, one program per thread, in the format of fuzz_ops.h, with the same checks on every call
 * (contents, alignment, usable size, errno, calloc zeroes, no overlap with the thread's own live
 * blocks). One more op: an op byte whose low 4 bits are 15 and high bit is set (fuzz_ops.h's
 * "free a run" otherwise) swaps one of the thread's slots with one of 32 shared slots, each
 * behind its own mutex; a block taken over is checked at once and, if bit 4 of the op byte is
 * set, freed at once by the new thread. Blocks of two threads that overlapped would corrupt each
 * other's patterns. After the threads are joined, the main thread checks and frees what is left
 * in the shared slots; then nothing may be live: the fast engine's statistics (allocs - frees,
 * bytes in use) or the lab's (fa_lab_check(), mallocs - frees) must say so.
 *
 *   mkdir -p /tmp/w && build-fuzz/tests/fuzz/fuzz_threads -runs=10000 -seed=1 /tmp/w tests/fuzz/corpus
 *   FITALLOC_MODE=lab FITALLOC_LOCK=thread build-fuzz/tests/fuzz/fuzz_threads CRASH-FILE
 */
#include <pthread.h>

#include "fitalloc-lab.h"
/* fuzz_run is not used here: each thread runs its own loop (with the exchange op). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "fuzz_ops.h"
#pragma GCC diagnostic pop

#define FT_THREADS 4
#define FT_SHARED 32

struct shared_slot {
    pthread_mutex_t lock;
    struct fuzz_slot s; /* s.p NULL: empty */
};

static struct shared_slot shared[FT_SHARED];
static struct fuzz_state states[FT_THREADS];
static pthread_barrier_t start_line[FT_THREADS + 1]; /* one per thread count */
static unsigned nthreads;                            /* of the current input */
static bool lab;

static bool is_exchange(const struct fuzz_state *s)
{
    return s->pos < s->size && (s->data[s->pos] & 0x8F) == 0x8F;
}

/* Swap one of our slots with a shared one (the slot and shared index are the next two bytes). */
static void exchange(struct fuzz_state *s)
{
    unsigned code = take(s);
    struct fuzz_slot *sl = &s->slot[take(s) % FUZZ_SLOTS];
    struct shared_slot *x = &shared[take(s) % FT_SHARED];
    if (sl->p)
        check_slot(s, sl, "before handing over");
    struct fuzz_slot given = *sl;
    pthread_mutex_lock(&x->lock);
    *sl = x->s;
    x->s = given;
    pthread_mutex_unlock(&x->lock);
    if (given.p) {
        s->live--;
        s->live_size -= given.usable;
    }
    if (sl->p) {
        s->live++;
        s->live_size += sl->usable;
        check_slot(s, sl, "taken over from another thread");
        if (code & 0x10)
            release(s, sl, code >> 5);
    }
}

static void *run_thread(void *arg)
{
    struct fuzz_state *s = arg;
    s->pos = 0;
    s->seeds = (uint64_t)(s - states) << 40; /* patterns differ between threads */
    s->end = false;
    pthread_barrier_wait(&start_line[nthreads]); /* all start together */
    for (s->op = 0; s->pos < s->size; s->op++) {
        if (is_exchange(s))
            exchange(s);
        else
            fuzz_op(s);
    }
    fuzz_release_all(s);
    return NULL;
}

static void check_nothing_live(const struct fuzz_state *s)
{
    if (lab) {
        struct fa_lab_stats st = fuzz_checked_lab_stats(s);
        if (st.mallocs != st.frees || st.direct_allocs != st.direct_frees ||
            st.blocks != st.free_blocks)
            fuzz_fail(s,
                      "lab statistics with nothing live: mallocs %llu frees %llu direct "
                      "%llu-%llu blocks %llu free blocks %llu",
                      (unsigned long long)st.mallocs, (unsigned long long)st.frees,
                      (unsigned long long)st.direct_allocs, (unsigned long long)st.direct_frees,
                      (unsigned long long)st.blocks, (unsigned long long)st.free_blocks);
        return;
    }
    struct fa_stats st;
    st.size = sizeof st;
    if (fa_stats_get(&st) != 0)
        fuzz_fail(s, "fa_stats_get failed");
    if (st.allocs != st.frees || st.bytes_in_use != 0)
        fuzz_fail(s, "statistics with nothing live: %llu allocs - %llu frees, %llu bytes in use",
                  (unsigned long long)st.allocs, (unsigned long long)st.frees,
                  (unsigned long long)st.bytes_in_use);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    lab = fa_option_get("mode") == 1;
    for (int i = 0; i < FT_SHARED; i++)
        pthread_mutex_init(&shared[i].lock, NULL);
    for (unsigned n = 1; n <= FT_THREADS; n++)
        pthread_barrier_init(&start_line[n], NULL, n);
    for (int i = 0; i < FT_THREADS; i++)
        states[i].fast = !lab;
    static const char *const locks[] = {"global", "thread", "arenas"};
    fprintf(stderr, "fuzz_threads: %s%s\n", lab ? "lab, lock " : "fast engine",
            lab ? locks[fa_option_get("lock") % 3] : "");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    unsigned n = nthreads = 2 + data[0] % 3;
    data++;
    size--;
    pthread_t th[FT_THREADS];
    for (unsigned t = 0; t < n; t++) {
        struct fuzz_state *s = &states[t];
        s->data = data + size * t / n;
        s->size = size * (t + 1) / n - size * t / n;
        if (pthread_create(&th[t], NULL, run_thread, s) != 0) {
            fprintf(stderr, "fuzz_threads: pthread_create failed\n");
            abort();
        }
    }
    for (unsigned t = 0; t < n; t++)
        pthread_join(th[t], NULL);

    struct fuzz_state *main_state = &states[0]; /* for the messages */
    for (int i = 0; i < FT_SHARED; i++) {
        struct fuzz_slot *sl = &shared[i].s;
        if (!sl->p)
            continue;
        check_slot(main_state, sl, "left in a shared slot");
        fa_free(sl->p);
        sl->p = NULL;
    }
    check_nothing_live(main_state);
    return 0;
}

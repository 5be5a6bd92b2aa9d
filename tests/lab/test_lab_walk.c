/* ctest labels: walk */
/* fa_lab_walk (fitalloc-lab.h) against the lab's own accounting. The test runs itself again
 * with FITALLOC_MODE=lab for every policy and lock mode, large requests sent to direct
 * mappings (FITALLOC_LAB_DIRECT). There, after a known set of allocations and frees:
 *   - the used blocks the walk reports are exactly the blocks that were there before the test
 *     allocated anything, plus the test's live pointers (payload and usable size included);
 *   - each heap's blocks tile it in address order, and the sums equal fa_lab_stats_get
 *     (heap bytes, free bytes with and without headers, free blocks, blocks, direct bytes);
 *   - with a second thread holding blocks: global and arenas modes walk its heap while it
 *     lives; thread mode skips it until the thread has exited (then its heap is pooled and
 *     walked), as documented.
 * Outside lab mode fa_lab_walk returns -1 without calling back; a lab with no allocation yet
 * calls back zero times; fa_heap_visit finds nothing of the fast engine in lab mode. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lab/heap/heap_walk.h"
#include "lab/threads/lab_instance.h"
#include "check.h"
#include "rerun.h"
#include "threads.h"
#include "fitalloc-lab.h"
#include "fitalloc-stats.h"
#include "fitalloc.h"

/* The test forks and runs itself 15 times: no 1 s sleep at the exit of each process (every
 * thread is joined by then); the child of the fork only sets variables and calls exec. */
FA_TEST_TSAN_OPTIONS("die_after_fork=0:atexit_sleep_ms=0")

#define DIRECT_FROM 65536
#define MAX_SEEN 20000
#define LIVE 400
#define THREAD_BLOCKS 50

/* What a walk saw; filled by the callback, which must not allocate. */
static struct fa_lab_block seen[MAX_SEEN];
static size_t seen_count;

struct sums {
    uint64_t heap_bytes, free_size, free_payload, free_blocks, blocks, direct_bytes, used;
};

static void collect(const struct fa_lab_block *b, void *arg)
{
    (void)arg;
    CHECK(seen_count < MAX_SEEN);
    seen[seen_count++] = *b;
}

static int walk(void)
{
    seen_count = 0;
    return fa_lab_walk(collect, NULL);
}

/* Check the blocks' shape and add them up. */
static struct sums tally(void)
{
    struct sums s = {0};
    const struct fa_lab_block *prev = NULL;
    for (size_t i = 0; i < seen_count; i++) {
        const struct fa_lab_block *b = &seen[i];
        if (b->heap < 0) {
            CHECK(b->used);
            CHECK(b->payload == b->start);
            CHECK_EQ(b->payload_size, b->size);
            CHECK_EQ(b->size % 4096, 0);
            s.direct_bytes += b->size;
            s.used++;
            prev = NULL;
            continue;
        }
        /* Within a heap, each block starts where the one before ended. */
        if (prev && prev->heap == b->heap)
            CHECK_EQ((uintptr_t)b->start, (uintptr_t)prev->start + prev->size);
        prev = b;
        CHECK_EQ((uintptr_t)b->payload, (uintptr_t)b->start + 16);
        CHECK_EQ(b->payload_size, b->size - 16);
        CHECK_EQ(b->size % 16, 0);
        CHECK_GE(b->size, 48);
        s.heap_bytes += b->size;
        s.blocks++;
        if (b->used) {
            s.used++;
        } else {
            s.free_blocks++;
            s.free_size += b->size;
            s.free_payload += b->payload_size;
        }
    }
    return s;
}

/* Walk and compare with the statistics taken right after (nothing allocates in between).
 * expect_heaps < 0: every heap is walked, and the sums equal the statistics; else that many
 * heaps are walked out of more, and the sums are at most the statistics. */
static struct sums walk_against_stats(int expect_heaps)
{
    int heaps = walk();
    struct fa_lab_stats st = {.size = sizeof st};
    CHECK_EQ(fa_lab_stats_get(&st), 0);
    struct sums s = tally();
    CHECK_EQ(s.direct_bytes, st.direct_bytes);
    if (expect_heaps >= 0) {
        CHECK_EQ(heaps, expect_heaps);
        CHECK_LT(heaps, st.heaps);
        CHECK_LT(s.heap_bytes, st.heap_bytes);
        CHECK_LE(s.free_size, st.free_space_with_headers);
        CHECK_LT(s.blocks, st.blocks);
        return s;
    }
    CHECK_EQ(heaps, st.heaps);
    CHECK_EQ(s.heap_bytes, st.heap_bytes);
    CHECK_EQ(s.free_size, st.free_space_with_headers);
    CHECK_EQ(s.free_payload, st.free_bytes);
    CHECK_EQ(s.free_blocks, st.free_blocks);
    CHECK_EQ(s.blocks, st.blocks);
    return s;
}

static int by_address(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
    return x < y ? -1 : x > y;
}

/* The used payloads of the last walk, sorted, into out; returns how many. */
static size_t used_payloads(void **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < seen_count; i++) {
        if (seen[i].used) {
            CHECK(n < max);
            out[n++] = seen[i].payload;
        }
    }
    qsort(out, n, sizeof out[0], by_address);
    return n;
}

static const struct fa_lab_block *find_used(const void *p)
{
    for (size_t i = 0; i < seen_count; i++)
        if (seen[i].used && seen[i].payload == p)
            return &seen[i];
    return NULL;
}

/* ---- a second thread holding blocks ---- */

static void *thread_blocks[THREAD_BLOCKS];
static size_t thread_block_size(int i)
{
    return (size_t)(i * 37 % 900) + 1;
}
static struct fa_test_holder holder = {
    .blocks = thread_blocks, .n = THREAD_BLOCKS, .size = thread_block_size};

static int heap_of_thread_blocks(void)
{
    int heap = -2;
    for (int i = 0; i < THREAD_BLOCKS; i++) {
        const struct fa_lab_block *b = find_used(thread_blocks[i]);
        CHECK_MSG(b != NULL, "block %d of the exited thread not walked", i);
        CHECK(heap == -2 || b->heap == heap);
        heap = b->heap;
    }
    return heap;
}

static void thread_phase(const char *lock, int main_heap)
{
    bool thread_mode = strcmp(lock, "thread") == 0;
    CHECK_EQ(pthread_barrier_init(&holder.barrier, NULL, 2), 0);
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, fa_test_holder_main, &holder), 0);
    pthread_barrier_wait(&holder.barrier);
    /* The thread lives: its heap is walked except in thread mode. */
    walk_against_stats(thread_mode ? 1 : -1); /* thread mode: the main thread's heap only */
    size_t found = 0;
    for (int i = 0; i < THREAD_BLOCKS; i++)
        found += find_used(thread_blocks[i]) != NULL;
    CHECK_EQ(found, thread_mode ? 0 : THREAD_BLOCKS);
    pthread_barrier_wait(&holder.barrier);
    CHECK_EQ(pthread_join(t, NULL), 0);
    /* Exited: in thread mode its heap waits in the pool, and the walk sees it. */
    walk_against_stats(-1);
    int heap = heap_of_thread_blocks();
    if (thread_mode)
        CHECK_NE(heap, main_heap);
    for (int i = 0; i < THREAD_BLOCKS; i++)
        fa_free(thread_blocks[i]);
    walk_against_stats(-1);
    for (int i = 0; i < THREAD_BLOCKS; i++)
        CHECK(find_used(thread_blocks[i]) == NULL);
    pthread_barrier_destroy(&holder.barrier);
}

/* ---- the lab-mode run ---- */

static unsigned heap_visit_calls;

static void count_area(const struct fa_heap_area *a, void *arg)
{
    (void)a, (void)arg;
    heap_visit_calls++;
}

static int run_child(const char *policy, const char *lock)
{
    static void *before[MAX_SEEN], *after[MAX_SEEN], *expect[MAX_SEEN];
    static void *live[LIVE];
    static size_t usable[LIVE];

    /* Blocks already there (the C library's, in builds where it allocates from us). */
    walk_against_stats(-1);
    size_t n_before = used_payloads(before, MAX_SEEN);

    fa_rng rng;
    fa_rng_seed(&rng, (uint64_t)policy[0] * 131 + (uint64_t)lock[0]);
    for (int round = 0; round < 3000; round++) {
        int i = (int)fa_rng_below(&rng, LIVE);
        if (live[i] && fa_rng_below(&rng, 4) == 0) {
            live[i] = fa_realloc(live[i], fa_rng_logsize(&rng, 3 * DIRECT_FROM));
            CHECK(live[i] != NULL);
        } else if (live[i]) {
            fa_free(live[i]);
            live[i] = NULL;
        } else {
            size_t n = fa_rng_logsize(&rng, 3 * DIRECT_FROM);
            unsigned how = (unsigned)fa_rng_below(&rng, 6);
            live[i] = how == 0   ? fa_aligned_alloc((size_t)32 << fa_rng_below(&rng, 8), n)
                      : how == 1 ? fa_calloc(1, n)
                                 : fa_malloc(n);
            CHECK(live[i] != NULL);
        }
    }
    size_t n_live = 0;
    for (int i = 0; i < LIVE; i++) {
        if (live[i]) {
            usable[i] = fa_malloc_usable_size(live[i]);
            expect[n_live++] = live[i];
        }
    }
    CHECK_GT(n_live, 50);

    struct sums s = walk_against_stats(-1);
    int main_heap = -1;
    size_t direct = 0;
    for (int i = 0; i < LIVE; i++) {
        if (!live[i])
            continue;
        const struct fa_lab_block *b = find_used(live[i]);
        CHECK_MSG(b != NULL, "live block %p not walked", live[i]);
        CHECK_EQ(b->payload_size, usable[i]);
        direct += b->heap < 0;
        if (b->heap >= 0)
            main_heap = b->heap;
    }
    CHECK_GT(direct, 0);
    CHECK_GT(s.free_blocks, 0);
    /* Exactly the blocks from before plus ours: nothing more, nothing less. */
    for (size_t i = 0; i < n_before; i++)
        expect[n_live + i] = before[i];
    qsort(expect, n_live + n_before, sizeof expect[0], by_address);
    size_t n_after = used_payloads(after, MAX_SEEN);
    CHECK_EQ(n_after, n_live + n_before);
    CHECK_EQ(memcmp(after, expect, n_after * sizeof after[0]), 0);

    for (int i = 0; i < LIVE; i++) {
        fa_free(live[i]);
        live[i] = NULL;
    }
    s = walk_against_stats(-1);
    CHECK_EQ(s.used, n_before);
    CHECK_EQ(s.direct_bytes, 0);

    thread_phase(lock, main_heap);

    /* The fast engine holds nothing in lab mode. */
    CHECK_EQ(fa_heap_visit(count_area, NULL), 0);
    CHECK_EQ(heap_visit_calls, 0);
    CHECK_EQ(fa_lab_walk(NULL, NULL), -1);
    return 0;
}

/* ---- outside lab mode ---- */

static unsigned calls;

static void count_block(const struct fa_lab_block *b, void *arg)
{
    (void)b, (void)arg;
    calls++;
}

static void fast_mode_and_empty_lab(void)
{
    void *p = fa_malloc(100); /* something allocated, but not in a lab */
    CHECK_EQ(fa_lab_walk(count_block, NULL), -1);
    CHECK_EQ(fa_lab_walk(NULL, NULL), -1);
    CHECK_EQ(calls, 0);
    fa_free(p);

    /* A lab of each lock mode before its first allocation: nothing to call back for. */
    for (int lock = 0; lock <= FA_LOCK_ARENAS; lock++) {
        struct fa_lab_config cfg = {
            .heap = {.policy = FA_POLICY_FIRST, .coalesce = true, .exact_max = 128},
            .lock = lock,
            .arenas = 2,
            .direct = DIRECT_FROM,
            .slot_size = (size_t)64 << 20,
            .max_heaps = 2,
        };
        struct fa_lab *lab = _fa_lab_instance_create(&cfg);
        CHECK(lab != NULL);
        CHECK_EQ(_fa_lab_instance_walk(lab, count_block, NULL), 0);
        CHECK_EQ(calls, 0);
        void *q = _fa_lab_instance_alloc(lab, 0, 1000);
        CHECK(q != NULL);
        CHECK_EQ(_fa_lab_instance_walk(lab, count_block, NULL), 1);
        CHECK_EQ(calls, 1); /* the block: the break grew just for it */
        calls = 0;
        _fa_lab_instance_free(lab, q, "free");
        _fa_lab_instance_thread_exit(lab);
        _fa_lab_instance_destroy(lab);
    }
}

int main(int argc, char **argv)
{
    if (argc > 3 && strcmp(argv[1], "--child") == 0)
        return run_child(argv[2], argv[3]);
    fast_mode_and_empty_lab();
    static const char *const policies[] = {"first",      "next", "best",  "worst",
                                           "segregated", "tlsf", "buddy", "slab"};
    static const char *const locks[] = {"global", "thread", "arenas"};
    for (int p = 0; p < FA_POLICY_COUNT; p++) {
        for (int l = 0; l < 3; l++) {
            char policy[64], lock[64], what[128];
            snprintf(policy, sizeof policy, "FITALLOC_POLICY=%s", policies[p]);
            snprintf(lock, sizeof lock, "FITALLOC_LOCK=%s", locks[l]);
            snprintf(what, sizeof what, "policy %s, lock %s", policies[p], locks[l]);
            const char *env[] = {"FITALLOC_MODE=lab",
                                 policy,
                                 lock,
                                 (p + l) % 2 ? "FITALLOC_LAB_INDEX=list"
                                             : "FITALLOC_LAB_INDEX=tree",
                                 "FITALLOC_LAB_DIRECT=65536",
                                 "FITALLOC_ARENAS=2",
                                 "FITALLOC_LAB_ARENA",
                                 NULL};
            char *args[] = {argv[0], (char *)"--child", (char *)policies[p], (char *)locks[l],
                            NULL};
            fa_test_rerun(what, env, args);
        }
    }
    printf("lab/lab_walk: ok\n");
    return 0;
}

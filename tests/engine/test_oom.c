/* ctest labels: reliability */
/* Out of memory under an address-space limit (RLIMIT_AS, what `ulimit -v` sets): allocations that
 * cannot fit fail cleanly and the program goes on.
 *
 * The test runs itself again under a limit of its own start-up size plus a headroom, once per
 * engine: the fast engine (96 MiB of headroom) and the lab with each lock mode (more: the lab
 * reserves its heaps' address space at start, and settles for less under a limit). There:
 *   - malloc, calloc, realloc (of NULL, of a small and of a large block), reallocarray,
 *     aligned_alloc, memalign, valloc, pvalloc of sizes beyond the limit give NULL with ENOMEM,
 *     posix_memalign returns ENOMEM and leaves *out and errno alone (at the start and again
 *     after all the fills); a block that failed to grow keeps its contents and can be freed;
 *   - filling memory with small, medium, large or mixed blocks ends in NULL with ENOMEM (not a
 *     crash), every block stays intact, all can be freed, and then about as much of the same
 *     kind fits again; small allocations work after each fill;
 *   - four threads filling memory at the same time (same checks in each), then all freed and
 *     small allocations working again in the main thread.
 * Skipped under sanitizers: they reserve terabytes of shadow address space, so RLIMIT_AS makes
 * no sense there. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "rerun.h"
#include "fitalloc.h"

#define MIB ((size_t)1 << 20)
#define GIB ((size_t)1 << 30)

/* No 1 s sleep at exit (the test skips itself under sanitizers). */
FA_TEST_TSAN_OPTIONS("atexit_sleep_ms=0")
#define MAXBLOCKS 200000

static size_t vm_size(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    CHECK(f != NULL);
    char line[256];
    size_t kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %zu kB", &kb) == 1)
            break;
    fclose(f);
    CHECK_GT(kb, 0);
    return kb * 1024;
}

/* Sizes no allocator can give under the limit (all well below PTRDIFF_MAX). */
static const size_t too_big[] = {(size_t)2 << 30, (size_t)64 << 30, (size_t)1 << 44};

#define CHECK_ENOMEM(p, what)                                                                      \
    do {                                                                                           \
        int e_ = errno;                                                                            \
        CHECK_MSG((p) == NULL, "%s succeeded under the limit", what);                              \
        CHECK_MSG(e_ == ENOMEM, "%s: errno %d, not ENOMEM", what, e_);                             \
    } while (0)

/* small (100 bytes, pattern 1) and large (2 MiB, pattern 2) live through the whole test. */
static char *small, *large;

static void impossible_requests(void)
{
    for (size_t i = 0; i < sizeof too_big / sizeof too_big[0]; i++) {
        size_t n = too_big[i];
        void *p;
        errno = 0;
        p = fa_malloc(n);
        CHECK_ENOMEM(p, "malloc");
        errno = 0;
        p = fa_calloc(1, n);
        CHECK_ENOMEM(p, "calloc(1, n)");
        errno = 0;
        p = fa_calloc(n / 4096, 4096);
        CHECK_ENOMEM(p, "calloc(n / 4096, 4096)");
        errno = 0;
        p = fa_realloc(NULL, n);
        CHECK_ENOMEM(p, "realloc(NULL, n)");
        errno = 0;
        p = fa_realloc(small, n);
        CHECK_ENOMEM(p, "realloc(small, n)");
        CHECK_PATTERN(small, 100, 1);
        errno = 0;
        p = fa_realloc(large, n);
        CHECK_ENOMEM(p, "realloc(large, n)");
        CHECK_PATTERN(large, 2 * MIB, 2);
        errno = 0;
        p = fa_reallocarray(small, n / 16, 16);
        CHECK_ENOMEM(p, "reallocarray");
        CHECK_PATTERN(small, 100, 1);
        static const size_t aligns[] = {64, 4096, 2 * MIB, 64 * MIB};
        for (size_t k = 0; k < sizeof aligns / sizeof aligns[0]; k++) {
            errno = 0;
            p = fa_aligned_alloc(aligns[k], n);
            CHECK_ENOMEM(p, "aligned_alloc");
            errno = 0;
            p = fa_memalign(aligns[k], n);
            CHECK_ENOMEM(p, "memalign");
            void *out = (void *)0x5eed;
            errno = 4242;
            int rc = fa_posix_memalign(&out, aligns[k], n);
            CHECK_EQ(rc, ENOMEM);
            CHECK(out == (void *)0x5eed);
            CHECK_EQ(errno, 4242);
        }
        /* An alignment that alone does not fit. */
        errno = 0;
        p = fa_aligned_alloc(n, 64);
        CHECK_ENOMEM(p, "aligned_alloc(huge alignment, 64)");
        errno = 0;
        p = fa_valloc(n);
        CHECK_ENOMEM(p, "valloc");
        errno = 0;
        p = fa_pvalloc(n);
        CHECK_ENOMEM(p, "pvalloc");
    }
}

/* At the end: the blocks are still fine, can grow a little (or fail to, cleanly) and be freed. */
static void grow_and_free(void)
{
    char *q = fa_realloc(small, 200);
    CHECK(q != NULL);
    CHECK_PATTERN(q, 100, 1);
    fa_free(q);
    errno = 0;
    q = fa_realloc(large, 3 * MIB);
    if (q == NULL) { /* the fast engine's small segments may hold all the address space */
        CHECK_EQ(errno, ENOMEM);
        q = large;
    }
    CHECK_PATTERN(q, 2 * MIB, 2);
    fa_free(q);
}

struct fill {
    int kind; /* 0 small, 1 medium, 2 large, 3 mixed */
    uint64_t seed;
    size_t blocks, bytes;
    char **p;
    size_t *n;
};

static size_t fill_size(fa_rng *r, int kind)
{
    switch (kind) {
    case 0: return 16 + (size_t)fa_rng_below(r, 8000);
    case 1: return 8192 + (size_t)fa_rng_below(r, 120 * 1024);
    case 2: return 200 * 1024 + (size_t)fa_rng_below(r, 3 * MIB);
    default: return fa_rng_below(r, 8) == 0 ? fill_size(r, 2) : fa_rng_logsize(r, 64 * 1024);
    }
}

/* Allocate until NULL (checking errno), then check and free everything. */
static void fill_until_enomem(struct fill *f)
{
    fa_rng r;
    fa_rng_seed(&r, f->seed);
    f->blocks = f->bytes = 0;
    int failures = 0;
    while (f->blocks < MAXBLOCKS) {
        size_t n = fill_size(&r, f->kind);
        errno = 0;
        char *p = fa_rng_below(&r, 8) == 0   ? fa_calloc(1, n)
                  : fa_rng_below(&r, 8) == 0 ? fa_aligned_alloc(64, n)
                                             : fa_malloc(n);
        if (p == NULL) {
            CHECK_MSG(errno == ENOMEM, "NULL from a %zu-byte allocation with errno %d", n, errno);
            /* A failure for one size may leave room for smaller ones: stop after a few. */
            if (++failures == 8)
                break;
            continue;
        }
        /* Touch the start and end only: the limit is on address space, not memory. */
        size_t k = n < 128 ? n / 2 : 64;
        fa_pattern_fill(p, k, f->seed + f->blocks);
        fa_pattern_fill(p + n - k, k, ~(f->seed + f->blocks));
        f->p[f->blocks] = p;
        f->n[f->blocks] = n;
        f->blocks++;
        f->bytes += n;
        CHECK_MSG(f->bytes < 64 * GIB, "64 GiB allocated under the limit: is it in force?");
    }
    CHECK_MSG(failures > 0, "%zu blocks and no failure", f->blocks);
    for (size_t i = 0; i < f->blocks; i++) {
        size_t n = f->n[i], k = n < 128 ? n / 2 : 64;
        CHECK_PATTERN(f->p[i], k, f->seed + i);
        CHECK_PATTERN(f->p[i] + n - k, k, ~(f->seed + i));
        fa_free(f->p[i]);
    }
}

static void *fill_thread(void *arg)
{
    struct fill *f = arg;
    for (int round = 0; round < 2; round++) {
        f->seed += 1000003;
        fill_until_enomem(f);
    }
    return NULL;
}

static void small_allocations_work(void)
{
    void *v[256];
    for (int i = 0; i < 256; i++) {
        v[i] = fa_malloc(16 + (size_t)i * 24);
        CHECK(v[i] != NULL);
        memset(v[i], i, 16);
    }
    for (int i = 0; i < 256; i++)
        fa_free(v[i]);
}

static int child(const char *name)
{
    struct rlimit lim;
    CHECK_EQ(getrlimit(RLIMIT_AS, &lim), 0);
    CHECK(lim.rlim_cur != RLIM_INFINITY);
    fprintf(stderr, "%s: limit %zu MiB, %zu MiB in use at start\n", name,
            (size_t)lim.rlim_cur / MIB, vm_size() / MIB);

    static char *ptrs[4][MAXBLOCKS];
    static size_t sizes[4][MAXBLOCKS];
    struct fill f = {.p = ptrs[0], .n = sizes[0]};

    small = fa_malloc(100);
    CHECK(small != NULL);
    fa_pattern_fill(small, 100, 1);
    large = fa_malloc(2 * MIB);
    CHECK(large != NULL);
    fa_pattern_fill(large, 2 * MIB, 2);
    impossible_requests();
    small_allocations_work();

    /* One thread: each kind of block, twice; the second time about as much fits again. Large
     * blocks first: the fast engine never unmaps small and medium segments, so after them
     * there is little room left for large blocks. */
    static const int order[] = {2, 3, 1, 0};
    for (int i = 0; i < 4; i++) {
        f.kind = order[i];
        f.seed = 100 + (uint64_t)i;
        fill_until_enomem(&f);
        size_t first = f.bytes;
        if (i == 0) /* the limit leaves the room it should (a check of the test itself) */
            CHECK_MSG(first >= 16 * MIB, "only %zu bytes of large blocks fitted", first);
        f.seed += 50;
        fill_until_enomem(&f);
        CHECK_MSG(f.bytes >= first / 2, "kind %d: %zu bytes fitted, then only %zu", f.kind, first,
                  f.bytes);
        small_allocations_work();
    }

    /* Several threads at once (small stacks: the limit counts them). */
    pthread_t t[4];
    struct fill tf[4];
    pthread_attr_t attr;
    CHECK_EQ(pthread_attr_init(&attr), 0);
    CHECK_EQ(pthread_attr_setstacksize(&attr, 256 * 1024), 0);
    for (int i = 0; i < 4; i++) {
        tf[i] = (struct fill){.kind = i, .seed = 7 + (uint64_t)i, .p = ptrs[i], .n = sizes[i]};
        CHECK_EQ(pthread_create(&t[i], &attr, fill_thread, &tf[i]), 0);
    }
    for (int i = 0; i < 4; i++)
        CHECK_EQ(pthread_join(t[i], NULL), 0);
    pthread_attr_destroy(&attr);

    impossible_requests();
    small_allocations_work();
    f.kind = 3;
    fill_until_enomem(&f);
    grow_and_free();
    fprintf(stderr, "%s: ok (last fill: %zu blocks, %zu MiB)\n", name, f.blocks, f.bytes / MIB);
    return 0;
}

/* The lab reserves its heaps at start, halving them under a limit down to 64 MiB each: the global
 * heap needs 128 MiB to place one aligned, the 8 thread heaps or 4 arenas (FITALLOC_ARENAS=4)
 * of the other modes about 600 MiB. */
static const struct config {
    const char *name, *mode, *lock;
    size_t headroom;
} configs[] = {
    {"fast", "fast", NULL, 96 * MIB},
    {"lab-global", "lab", "global", 256 * MIB},
    {"lab-thread", "lab", "thread", GIB},
    {"lab-arenas", "lab", "arenas", GIB},
};

/* In the child, before it runs the program again: its address space limited to *arg bytes. */
static void limit_address_space(void *arg)
{
    size_t bytes = *(size_t *)arg;
    struct rlimit lim = {bytes, bytes};
    if (setrlimit(RLIMIT_AS, &lim) != 0)
        _exit(126);
}

int main(int argc, char **argv)
{
    if (FA_TEST_SANITIZED) {
        printf("engine/oom: skipped (sanitizers reserve terabytes of address space)\n");
        return 77;
    }
    if (argc > 2 && strcmp(argv[1], "--child") == 0)
        return child(argv[2]);
    size_t base = vm_size(); /* this program's size at start, as the child's will be */
    for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
        const struct config *cf = &configs[c];
        char mode[64], lock[64];
        snprintf(mode, sizeof mode, "FITALLOC_MODE=%s", cf->mode);
        snprintf(lock, sizeof lock, "FITALLOC_LOCK=%s", cf->lock ? cf->lock : "global");
        const char *env[] = {
            mode, "FITALLOC_ARENAS=4", "FITALLOC_LAB_ARENA", "FITALLOC_LAB_DIRECT", lock, NULL};
        if (!cf->lock)
            env[4] = NULL; /* the lock mode of the environment, if any */
        char *args[] = {argv[0], (char *)"--child", (char *)cf->name, NULL};
        size_t limit = base + cf->headroom;
        fa_test_rerun_with(cf->name, env, args, limit_address_space, &limit);
    }
    printf("engine/oom: ok\n");
    return 0;
}

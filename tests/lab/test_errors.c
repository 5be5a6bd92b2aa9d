/* Bad input to the lab: a double free or a pointer that is not a live block aborts with a
 * message naming the pointer ("fitalloc: free(): double free of 0x... (N-byte block)" / "... invalid pointer
 * 0x..."), caught by the boundary tags; a heap that cannot grow returns NULL with ENOMEM.
 * Each aborting case runs in a forked child whose stderr goes to a pipe. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "lab/threads/lab_instance.h"
#include "check.h"
#include "child.h"
#include "lab_test.h"

static char out[4096];

static struct fa_lab *make_lab(enum fa_lock_mode lock, size_t arena, size_t direct)
{
    struct fa_lab_config cfg = {
        .heap = {.policy = FA_POLICY_FIRST,
                 .index = FA_LAB_INDEX_TREE,
                 .coalesce = true,
                 .arena = arena},
        .lock = lock,
        .direct = direct,
        .slot_size = (size_t)1 << 20,
        .max_heaps = 2,
    };
    return lab_test_lab(&cfg);
}

struct void_fn {
    void (*fn)(void);
};

static void call_void_fn(void *arg)
{
    ((const struct void_fn *)arg)->fn();
}

/* Run fn in a child: it prints "pointer <p>" and must then die of SIGABRT printing
 * "fitalloc: <caller>(): <what> <p>". */
static void expect_abort(const char *name, void (*fn)(void), const char *caller, const char *what)
{
    struct void_fn call = {fn};
    int status = fa_test_run_child(call_void_fn, &call, out, sizeof out);
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
              "%s: child did not abort (status %#x), stderr: %s", name, status, out);
    char pointer[64] = "", expected[160];
    CHECK_MSG(sscanf(out, "pointer %63s", pointer) == 1, "%s: no pointer line: %s", name, out);
    /* "double free of 0x... (N-byte block)" or "invalid pointer 0x..." */
    bool double_free = strcmp(what, "double free") == 0;
    snprintf(expected, sizeof expected, "fitalloc: %s(): %s %s%s", caller,
             double_free ? "double free of" : what, pointer, double_free ? " (" : "\n");
    CHECK_MSG(strstr(out, expected) != NULL, "%s: stderr lacks \"%s\": %s", name, expected, out);
}

/* The children print the pointer first, so the message can be matched exactly. */
static void say(const void *p)
{
    fprintf(stderr, "pointer %p\n", p);
    fflush(stderr);
}

/* A block freed twice by `release`, a neighbour kept after it. */
static void double_free_by(void (*release)(fa_classic_heap *, void *, const char *))
{
    fa_classic_heap *h = lab_test_heap(FA_POLICY_BEST, FA_LAB_INDEX_TREE, true, (size_t)1 << 20);
    void *p = _fa_classic_heap_alloc(h, 100);
    _fa_classic_heap_alloc(h, 1);
    say(p);
    release(h, p, "free");
    release(h, p, "free");
}

static void heap_double_free(void)
{
    double_free_by(_fa_classic_heap_free);
}

static void heap_double_free_merged(void)
{
    fa_classic_heap *h = lab_test_heap(FA_POLICY_FIRST, FA_LAB_INDEX_TREE, true, (size_t)1 << 20);
    void *a = _fa_classic_heap_alloc(h, 100), *b = _fa_classic_heap_alloc(h, 100);
    _fa_classic_heap_alloc(h, 1);
    say(b);
    _fa_classic_heap_free(h, a, "free");
    _fa_classic_heap_free(h, b, "free"); /* merges into a */
    _fa_classic_heap_free(h, b, "free");
}

static void heap_interior(void)
{
    fa_classic_heap *h = lab_test_heap(FA_POLICY_WORST, FA_LAB_INDEX_TREE, true, (size_t)1 << 20);
    char *p = _fa_classic_heap_alloc(h, 100);
    memset(p, 0, 100);
    say(p + 32);
    _fa_classic_heap_free(h, p + 32, "free");
}

static void heap_misaligned(void)
{
    fa_classic_heap *h = lab_test_heap(FA_POLICY_NEXT, FA_LAB_INDEX_TREE, true, (size_t)1 << 20);
    char *p = _fa_classic_heap_alloc(h, 100);
    say(p + 8);
    _fa_classic_heap_free(h, p + 8, "free");
}

static void lab_foreign(void)
{
    static char not_ours[64] __attribute__((aligned(16)));
    struct fa_lab *lab = make_lab(FA_LOCK_GLOBAL, 0, 0);
    say(not_ours + 16);
    _fa_lab_instance_free(lab, not_ours + 16, "free");
}

static void lab_beyond_break(void)
{
    struct fa_lab *lab = make_lab(FA_LOCK_ARENAS, 0, 0);
    char *p = _fa_lab_instance_alloc(lab, 0, 100);
    say(p + 4096); /* inside the slot, past the break */
    _fa_lab_instance_free(lab, p + 4096, "free");
}

static void lab_realloc_freed(void)
{
    struct fa_lab *lab = make_lab(FA_LOCK_GLOBAL, 0, 0);
    void *p = _fa_lab_instance_alloc(lab, 0, 100);
    _fa_lab_instance_alloc(lab, 0, 1);
    say(p);
    _fa_lab_instance_free(lab, p, "free");
    _fa_lab_instance_realloc(lab, p, 200);
}

static void lab_direct_double_free(void)
{
    struct fa_lab *lab = make_lab(FA_LOCK_GLOBAL, 0, 4096);
    void *p = _fa_lab_instance_alloc(lab, 0, 10000);
    say(p);
    _fa_lab_instance_free(lab, p, "free");
    _fa_lab_instance_free(lab, p, "free"); /* the mapping is gone: no longer a lab pointer */
}

/* What a thread-mode free from another thread does, twice: the second claim fails. (Called
 * directly: sanitizers do not allow threads in a forked child.) */
static void remote_double_free(void)
{
    double_free_by(_fa_classic_heap_remote_free);
}

/* A remote free of a block the owner has already taken back and freed. */
static void remote_free_of_free_block(void)
{
    fa_classic_heap *h = lab_test_heap(FA_POLICY_FIRST, FA_LAB_INDEX_TREE, true, (size_t)1 << 20);
    void *p = _fa_classic_heap_alloc(h, 100);
    _fa_classic_heap_alloc(h, 1);
    say(p);
    _fa_classic_heap_remote_free(h, p, "free");
    _fa_classic_heap_drain(h);
    _fa_classic_heap_remote_free(h, p, "free");
}

static void test_out_of_memory(void)
{
    /* A fixed arena: what does not fit fails, the arena never grows. */
    struct fa_lab *lab = make_lab(FA_LOCK_GLOBAL, 65536, 0);
    errno = 0;
    CHECK(_fa_lab_instance_alloc(lab, 0, 65536) == NULL);
    CHECK_EQ(errno, ENOMEM);
    void *p = _fa_lab_instance_alloc(lab, 0, 60000);
    CHECK(p != NULL);
    errno = 0;
    CHECK(_fa_lab_instance_alloc(lab, 0, 6000) == NULL);
    CHECK_EQ(errno, ENOMEM);
    errno = 0;
    CHECK(_fa_lab_instance_realloc(lab, p, 66000) == NULL); /* p stays valid */
    CHECK_EQ(errno, ENOMEM);
    CHECK_EQ(_fa_lab_instance_usable(lab, p), 60000);
    CHECK(_fa_lab_instance_realloc(lab, p, 65000) == p); /* grows into the rest, in place */
    _fa_lab_instance_free(lab, p, "free");
    _fa_lab_instance_destroy(lab);

    /* A growable heap whose reservation (1 MiB here) is full. */
    lab = make_lab(FA_LOCK_GLOBAL, 0, 0);
    errno = 0;
    CHECK(_fa_lab_instance_alloc(lab, 0, 2 << 20) == NULL);
    CHECK_EQ(errno, ENOMEM);
    errno = 0;
    CHECK(_fa_lab_instance_alloc(lab, 0, SIZE_MAX - 8) == NULL);
    CHECK_EQ(errno, ENOMEM);
    CHECK(_fa_lab_instance_alloc(lab, 0, 500000) != NULL);
    CHECK(_fa_lab_instance_alloc(lab, 0, 600000) == NULL);
    _fa_lab_instance_destroy(lab);
}

int main(void)
{
    test_out_of_memory();
    expect_abort("double free", heap_double_free, "free", "double free");
    expect_abort("double free after a merge", heap_double_free_merged, "free", "double free");
    expect_abort("interior pointer", heap_interior, "free", "invalid pointer");
    expect_abort("misaligned pointer", heap_misaligned, "free", "invalid pointer");
    expect_abort("foreign pointer", lab_foreign, "free", "invalid pointer");
    expect_abort("past the break", lab_beyond_break, "free", "invalid pointer");
    expect_abort("realloc of a freed block", lab_realloc_freed, "realloc", "double free");
    expect_abort("direct block freed twice", lab_direct_double_free, "free", "invalid pointer");
    expect_abort("remote double free", remote_double_free, "free", "double free");
    expect_abort("remote free of a free block", remote_free_of_free_block, "free", "double free");
    printf("lab/errors: ok\n");
    return 0;
}

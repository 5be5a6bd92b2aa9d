/* ctest labels: errors */
/* Default-mode hardening of the fast engine, through the fa_* API. Each misuse runs in a forked
 * child that must abort (SIGABRT) with the exact report:
 *   double frees at every size, with frees and allocations in between, through realloc and
 *   free_sized, from another thread, of a block whose page was released, of a block that was
 *   provisioned but never handed out:  "fitalloc: <caller>(): double free of 0x... (N-byte block)"
 *   interior pointers into the caller's own page (the fast path):  "... invalid pointer 0x..."
 *   a write into a freed block, into the owner's or the remote free list (which the owner
 *   takes as its free list once its own is used up):
 *     "fitalloc: heap corruption in the free list of the N-byte page at 0x..."
 * A non-canonical alias of an interior pointer must end the child by a signal, never let it
 * go on. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "check.h"
#include "child.h"
#include "fitalloc.h"
#include "threads.h"

static char out[8192]; /* the stderr of the last child */

/* The child must abort with a line that contains `expected` (printf-formatted). */
static void expect_report(const char *name, void (*fn)(void *), void *arg, const char *expected)
{
    fa_test_expect_abort(name, fn, arg, expected, out, sizeof out);
}

static char expected[256];
static void *victim; /* the pointer each child misuses, set up before the fork */

#define EXPECT(name, fn, ...)                                                                      \
    do {                                                                                           \
        snprintf(expected, sizeof expected, __VA_ARGS__);                                          \
        expect_report(name, fn, NULL, expected);                                                   \
    } while (0)

static void *prepare(size_t n)
{
    victim = fa_malloc(n);
    CHECK(victim != NULL);
    memset(victim, 0x5a, n);
    return victim;
}

static void double_free(void *arg)
{
    (void)arg;
    fa_free(victim);
    fa_free(victim);
}

static void double_free_between(void *arg)
{
    (void)arg;
    void *other[8];
    fa_free(victim);
    for (int i = 0; i < 8; i++)
        other[i] = fa_malloc(64 + 200 * (size_t)i); /* other sizes: victim stays free */
    for (int i = 0; i < 8; i += 2)
        fa_free(other[i]);
    fa_free(victim);
}

static void double_free_realloc(void *arg)
{
    (void)arg;
    fa_free(victim);
    void *volatile q = fa_realloc(victim, 100000);
    (void)q;
}

/* The freed block's mapping serves the next malloc of its size, one page further in: the old
 * pointer, freed again, must be named a double free, not taken for the new block. */
static void double_free_after_reuse(void *arg)
{
    size_t n = *(const size_t *)arg;
    fa_free(victim);
    void *next = fa_malloc(n);
    CHECK(next != NULL && next != victim);
    fa_free(victim);
}

static void double_free_sized(void *arg)
{
    (void)arg;
    fa_free_sized(victim, 64);
    fa_free_sized(victim, 64);
}

static void *free_it(void *p)
{
    fa_free(p);
    return NULL;
}

static void remote_double_free(void *arg)
{
    (void)arg;
    for (int i = 0; i < 2; i++) {
        fa_test_on_thread(free_it, victim);
    }
}

/* The victim is the only block of a page that is not its queue's head: freeing it releases
 * the page, and the second free finds a free page. */
static void double_free_released_page(void *arg)
{
    (void)arg;
    enum { N = 200 };
    void *blocks[N];
    for (int i = 0; i < N; i++) /* 64 KiB pages of 2 KiB blocks: several pages */
        blocks[i] = fa_malloc(2048);
    void *last = blocks[N - 1];
    for (int i = N - 1; i >= 0; i--)
        if (blocks[i] != last)
            fa_free(blocks[i]);
    fa_free(last);
    fa_free(last);
}

static void free_never_allocated(void *arg)
{
    (void)arg;
    fa_free((char *)victim + 64); /* the next block of the page: provisioned, never handed out */
}

static void free_interior(void *arg)
{
    (void)arg;
    fa_free((char *)victim + 16);
}

static void free_header(void *arg)
{
    (void)arg;
    fa_free((void *)(((uintptr_t)victim & ~(((uintptr_t)4 << 20) - 1)) + 256));
}

static void free_noncanonical(void *arg)
{
    (void)arg;
    fa_free((void *)(((uintptr_t)victim + 16) | (uintptr_t)1 << 63));
}

static void write_after_free(void *arg)
{
    (void)arg;
    fa_free(victim);
    memset(victim, 0x41, 16);
    /* The freed block waits on the page's list of local frees until malloc has used up the
     * blocks before it: allocate until its turn comes. */
    for (int i = 0; i < 4096; i++) {
        void *volatile q = fa_malloc(32);
        (void)q;
    }
}

static void *free_and_write(void *p)
{
    fa_free(p);
    memset(p, 0, 8); /* zeros: the link decodes to the secret itself */
    return NULL;
}

static void remote_write_after_free(void *arg)
{
    (void)arg;
    fa_test_on_thread(free_and_write, victim);
    /* Use up the page, so that the owner's malloc must collect the remote list. */
    for (int i = 0; i < 4096; i++) {
        void *volatile q = fa_malloc(32);
        (void)q;
    }
}

int main(void)
{
    if (FA_TEST_SANITIZED) {
        /* ASan and TSan report these misuses themselves, before fitalloc can. */
        printf("engine/misuse: skipped under a sanitizer\n");
        return 77;
    }
    void *keep = fa_malloc(32); /* keeps the pages of these sizes in use */
    void *keep2 = fa_malloc(4096);
    /* 1 MiB: a large block, which its thread keeps mapped once freed (engine/large.c) */
    static const size_t sizes[] = {32, 4096, 300000, (size_t)1 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = sizes[i];
        void *p = prepare(n);
        size_t block = fa_malloc_usable_size(p);
        EXPECT("double free", double_free, "fitalloc: free(): double free of %p (%zu-byte block)",
               p, block);
        EXPECT("double free with others between", double_free_between,
               "fitalloc: free(): double free of %p (%zu-byte block)", p, block);
        EXPECT("double free by realloc", double_free_realloc,
               "fitalloc: realloc(): double free of %p (%zu-byte block)", p, block);
        EXPECT("remote double free", remote_double_free,
               "fitalloc: free(): double free of %p (%zu-byte block)", p, block);
        if (n > 512 * 1024) {
            char expected[160];
            snprintf(expected, sizeof expected, "fitalloc: free(): double free of %p (", p);
            expect_report("double free after its mapping was reused", double_free_after_reuse, &n,
                          expected);
        }
        fa_free(p);
    }
    void *p = prepare(64);
    EXPECT("double free_sized", double_free_sized,
           "fitalloc: free_sized(): double free of %p (64-byte block)", p);
    EXPECT("free of a block never handed out", free_never_allocated,
           "fitalloc: free(): double free of %p (64-byte block)", (char *)p + 64);
    EXPECT("interior pointer", free_interior, "fitalloc: free(): invalid pointer %p",
           (char *)p + 16);
    EXPECT("segment header", free_header, "fitalloc: free(): invalid pointer 0x");
    int status = fa_test_run_child(free_noncanonical, NULL, out, sizeof out);
    CHECK_MSG(WIFSIGNALED(status), "non-canonical interior pointer: status %#x, %s", status, out);
    fa_free(p);
    EXPECT("double free of a released page's block", double_free_released_page,
           "(2048-byte block)");

    p = prepare(32);
    fa_free(keep);
    keep = NULL;
    EXPECT("write after free", write_after_free,
           "fitalloc: heap corruption in the free list of the 32-byte page at 0x");
    EXPECT("remote write after free", remote_write_after_free,
           "fitalloc: heap corruption in the free list of the 32-byte page at 0x");
    fa_free(p);
    fa_free(keep2);
    printf("engine/misuse: ok\n");
    return 0;
}

/* ctest labels: errors */
/* Secure mode (FITALLOC_SECURE=1; the test runs itself again with it set): each misuse in a
 * forked child must abort with its report, at 40 B, 3000 B and 300 000 B (a small, a medium
 * and a big block, which ends in a guard page and follows one):
 *   1 and 32 bytes written past the block, then free:  "fitalloc: free(): heap overflow of
 *     the N-byte block at 0x..."   (N: the size asked for, or the block's room when the
 *     overflow also wiped the recorded size)
 *   1 and 32 bytes written before it:  "... heap underflow ..."
 *   a write into a freed block: reported when it leaves the quarantine, or at exit
 *   free_sized with another size:  "fitalloc: free_sized(): size mismatch: ..."
 *   1 byte written past a block of a thread that has ended (its heap abandoned at once: the
 *     test runs with FITALLOC_PARKED_HEAPS=0), then free from another thread: the same report
 * and the parent checks what needs no misuse: a freed block is not the next one handed out,
 * blocks of a fresh page do not come in address order, malloc_usable_size is the size asked
 * for, FITALLOC_SECURE_ZERO clears freed blocks. A large block's guard pages and its
 * quarantine are tests/secure/test_guards.c's. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "rerun.h"
#include "child.h"
#include "fitalloc.h"
#include "secure_test.h"
#include "threads.h"

static void overflow_1(void *arg)
{
    (void)arg;
    victim[victim_size] = 'x';
    fa_free(victim);
}

static void overflow_32(void *arg)
{
    (void)arg;
    memcpy(victim + victim_size, "0123456789abcdef0123456789abcdef", 32);
    fa_free(victim);
}

static void underflow_1(void *arg)
{
    (void)arg;
    victim[-1] = 'x';
    fa_free(victim);
}

static void underflow_32(void *arg)
{
    (void)arg;
    memset(victim - 32, 'x', 32);
    fa_free(victim);
}

static void write_after_free(void *arg)
{
    (void)arg;
    fa_free(victim);
    memset(victim, 'x', 16);
    for (int i = 0; i < 100000; i++) /* push it out of the quarantine */
        fa_free(fa_malloc(victim_size));
}

static void write_after_free_at_exit(void *arg)
{
    (void)arg;
    fa_free(victim);
    victim[20] = 'x';
    exit(0);
}

static void size_mismatch(void *arg)
{
    (void)arg;
    fa_free_sized(victim, victim_size + 1);
}

static void *malloc_victim(void *arg)
{
    victim = fa_malloc(victim_size);
    return arg;
}

/* The block's page has lost its heap when its thread ended. */
static void overflow_orphan(void *arg)
{
    (void)arg;
    fa_test_on_thread(malloc_victim, NULL);
    CHECK(victim != NULL);
    victim[victim_size] = 'x';
    fa_free(victim);
}

int main(int argc, char **argv)
{
    int rc = fa_test_rerun_secure("secure/errors", "FITALLOC_PARKED_HEAPS=0", argv);
    if (rc >= 0)
        return rc;
    (void)argc;
    char expected[160];
    static const size_t sizes[] = {40, 3000, 300000}; /* small, medium, big */
    for (size_t i = 0; i < 3; i++) {
        victim_size = sizes[i];
        bool big = victim_size > (128 << 10);
        char *before = fa_malloc(victim_size);
        victim = fa_malloc(victim_size);
        CHECK(victim != NULL && before != NULL);
        CHECK_EQ(fa_malloc_usable_size(victim), victim_size);
        snprintf(expected, sizeof expected,
                 "fitalloc: free(): heap overflow of the %zu-byte block at %p", victim_size,
                 (void *)victim);
        expect("overflow by 1", overflow_1, expected);
        /* 32 bytes may also wipe the recorded size: the report then names the block's room. */
        snprintf(expected, sizeof expected, "-byte block at %p", (void *)victim);
        expect("overflow by 32", overflow_32, expected);
        /* A big block starts right after a guard page: the write itself is reported. */
        const char *underflow = big ? "fitalloc: heap overflow or underflow into the guard page"
                                    : "fitalloc: free(): heap underflow";
        expect("underflow by 1", underflow_1, underflow);
        expect("underflow by 32", underflow_32, underflow);
        expect("mismatched free_sized", size_mismatch, "fitalloc: free_sized(): size mismatch");
        expect("overflow of an ended thread's block", overflow_orphan,
               "fitalloc: free(): heap overflow");
        expect("write after free", write_after_free, "write after free of the");
        expect("write after free, seen at exit", write_after_free_at_exit,
               "fitalloc: exit(): write after free");
        /* The freed block is not handed out again at once. */
        fa_free(victim);
        void *next = fa_malloc(victim_size);
        CHECK(next != victim);
        fa_free(next);
        fa_free(before);
    }
    /* Random placement: 64 blocks of a fresh size class do not come in address order. */
    char *b[64];
    int ascending = 0;
    for (int i = 0; i < 64; i++) {
        b[i] = fa_malloc(5000);
        ascending += i > 0 && b[i] > b[i - 1];
    }
    CHECK_MSG(ascending < 60, "%d of 63 steps went up", ascending);
    for (int i = 0; i < 64; i++)
        fa_free(b[i]);
    printf("secure/errors: ok\n");
    return 0;
}

/* Secure mode's guards (FITALLOC_SECURE=1; the test runs itself again with it set): each misuse
 * in a forked child must abort with fitalloc's report, made in the SIGSEGV handler when the
 * misuse touches memory secure mode keeps inaccessible:
 *   malloc(0): a read or a write through the pointer, before or after free ("... through the
 *     0-byte block at <p> (malloc(0) ..."), a second free ("double free of <p> (0-byte block)");
 *   a runaway write of 1 MiB past a small (40 B) and a medium (3000 B) block, and one of 1 MiB
 *     downwards before them ("heap overflow or underflow into the guard page at ..."): every
 *     page of blocks ends in a guard page, and one comes before the first;
 *   a big block (300 000 B, a big page's: one guard page before it, one after): 1 byte and
 *     1 MiB before it, 1 MiB past it (the guard report, naming the block), a read or a write
 *     past its first page after free ("read or write after free at ..., in the freed
 *     N-byte block at <p>": it waits in the quarantine inaccessible);
 *   a large block (1 000 000 B, a mapping of its own): 1 byte before it ("heap underflow into
 *     the guard page at ..., before the 1000000-byte block at <p>"), 1 MiB past it ("heap
 *     overflow into the guard page at ..., after the ..."), a read or a write after free in
 *     its first 64 KiB (inaccessible while the mapping is retired), 1 MiB past it once realloc
 *     has grown it step by step (the tail guard follows its end);
 *   a write into a freed small block where its zeros are checked when it is handed out again
 *     ("fitalloc: malloc(): write after free of the ...").
 * The parent checks what needs no misuse: malloc(0) gives distinct pointers with a usable size
 * of 0 that realloc and free take, and a freed block reads as zero past its link and mark.
 * A handler the program installs later is put behind fitalloc's at its next segment: it
 * still gets every other SIGSEGV, and fitalloc still reports its own. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdbool.h>
#include <signal.h>
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

#define MIB (1u << 20)

static size_t after_free_at; /* where read_after_free and write_after_free touch the block */

static void zero_read(void *arg)
{
    (void)arg;
    printf("%d\n", *(volatile char *)victim);
}

static void zero_write(void *arg)
{
    (void)arg;
    *(volatile char *)victim = 1;
}

static void zero_write_after_free(void *arg)
{
    (void)arg;
    fa_free(victim);
    *(volatile char *)victim = 1;
}

static void zero_double_free(void *arg)
{
    (void)arg;
    fa_free(victim);
    fa_free(victim);
}

static void runaway_up(void *arg)
{
    (void)arg;
    volatile char *v = victim;
    for (size_t i = 0; i < MIB; i++)
        v[victim_size + i] = 'x';
}

static void runaway_down(void *arg)
{
    (void)arg;
    volatile char *v = victim;
    for (size_t i = 1; i <= MIB; i++)
        v[-(ptrdiff_t)i] = 'x';
}

static void underflow_1(void *arg)
{
    (void)arg;
    ((volatile char *)victim)[-1] = 'x';
}

static void read_after_free(void *arg)
{
    (void)arg;
    fa_free(victim);
    printf("%d\n", ((volatile char *)victim)[after_free_at]);
}

static void write_after_free(void *arg)
{
    (void)arg;
    fa_free(victim);
    ((volatile char *)victim)[after_free_at + 100] = 'x';
}

/* A write into the zeros of a freed block, seen when malloc hands it out again. */
static void write_after_free_reuse(void *arg)
{
    (void)arg;
    fa_free(victim);
    ((volatile char *)victim)[24] = 'x';
    for (int i = 0; i < 100000; i++)
        fa_free(fa_malloc(victim_size));
}

static sigjmp_buf jump;
static void on_segv(int sig)
{
    (void)sig;
    siglongjmp(jump, 1);
}

int main(int argc, char **argv)
{
    int rc = fa_test_rerun_secure("secure/guards", NULL, argv);
    if (rc >= 0)
        return rc;
    (void)argc;
    char expected[200];

    /* malloc(0) */
    victim_size = 0;
    victim = fa_malloc(0);
    char *other = fa_malloc(0);
    CHECK(victim && other && victim != other);
    CHECK_EQ(fa_malloc_usable_size(victim), 0);
    snprintf(expected, sizeof expected, "through the 0-byte block at %p (malloc(0)",
             (void *)victim);
    expect("read through malloc(0)", zero_read, expected);
    expect("write through malloc(0)", zero_write, expected);
    expect("write through malloc(0) after free", zero_write_after_free, expected);
    snprintf(expected, sizeof expected, "fitalloc: free(): double free of %p (0-byte block)",
             (void *)victim);
    expect("double free of malloc(0)", zero_double_free, expected);
    char *grown = fa_realloc(other, 100);
    CHECK(grown != NULL);
    memset(grown, 1, 100);
    fa_free(grown);
    fa_free(victim);

    /* Runaway writes from blocks of pages, both ways. */
    static const size_t sizes[] = {40, 3000};
    for (size_t i = 0; i < 2; i++) {
        victim_size = sizes[i];
        victim = fa_malloc(victim_size);
        CHECK(victim != NULL);
        const char *guard = "fitalloc: heap overflow or underflow into the guard page at";
        expect("1 MiB written past the block", runaway_up, guard);
        expect("1 MiB written before the block", runaway_down, guard);
        fa_free(victim);
    }

    /* A big block: guards on both sides, inaccessible past its first page once freed. Each
     * report ends with the block's address. */
    victim_size = 300000;
    after_free_at = 200000;
    victim = fa_malloc(victim_size);
    CHECK(victim != NULL);
    snprintf(expected, sizeof expected, "-byte block at %p\n", (void *)victim);
    expect("1 byte before a big block", underflow_1, expected);
    expect("1 MiB before a big block", runaway_down, expected);
    expect("1 MiB past a big block", runaway_up, "fitalloc: heap overflow or underflow into");
    expect("read after free of a big block", read_after_free, expected);
    expect("write after free of a big block", write_after_free, expected);
    fa_free(victim);

    /* A large block: guards on both sides, inaccessible once freed. */
    victim_size = 1000000;
    after_free_at = 30000; /* a kept mapping is inaccessible over its block's first 64 KiB */
    victim = fa_malloc(victim_size);
    CHECK(victim != NULL);
    snprintf(expected, sizeof expected, ", before the %zu-byte block at %p", victim_size,
             (void *)victim);
    expect("1 byte before a large block", underflow_1, expected);
    expect("1 MiB before a large block", runaway_down, expected);
    snprintf(expected, sizeof expected, ", after the %zu-byte block at %p", victim_size,
             (void *)victim);
    expect("1 MiB past a large block", runaway_up, expected);
    snprintf(expected, sizeof expected, ", in the freed %zu-byte block at %p", victim_size,
             (void *)victim);
    expect("read after free of a large block", read_after_free, expected);
    expect("write after free of a large block", write_after_free, expected);
    /* Grown by realloc, 3000 bytes at a time (after the first step, within the headroom its
     * mapping keeps): each step writes its new bytes, over the page the tail guard held
     * before, and the guard follows the block's end. */
    memset(victim, 0x5a, victim_size);
    for (int step = 0; step < 8; step++) {
        victim = fa_realloc(victim, victim_size + 3000);
        CHECK(victim != NULL);
        memset(victim + victim_size, 0x5a, 3000);
        victim_size += 3000;
    }
    for (size_t i = 0; i < victim_size; i++)
        CHECK_MSG(victim[i] == 0x5a, "byte %zu of the grown block lost", i);
    snprintf(expected, sizeof expected, ", after the %zu-byte block at %p", victim_size,
             (void *)victim);
    expect("1 MiB past a large block grown by realloc", runaway_up, expected);
    fa_free(victim);

    /* Zero fill: checked when the block comes back, or at the free of a block next to it. */
    victim_size = 40;
    victim = fa_malloc(victim_size);
    CHECK(victim != NULL);
    memset(victim, 0x5a, victim_size);
    expect("write after free, seen at reuse", write_after_free_reuse,
           "(): write after free of the");
    fa_free(victim);
    for (size_t i = 16; i < victim_size; i++) /* past the link and the mark */
        CHECK_MSG(victim[i] == 0, "byte %zu of a freed block is %#x, not 0", i,
                  (unsigned)(unsigned char)victim[i]);

    /* The program installs its own handler; fitalloc's comes back in front of it with the
     * next segment (6 MiB of small blocks), and hands it every fault that is not its own. */
    struct sigaction sa = {.sa_handler = on_segv};
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGSEGV, &sa, NULL), 0);
    static char *blocks[6000];
    for (size_t i = 0; i < 6000; i++)
        CHECK((blocks[i] = fa_malloc(1000)) != NULL);
    volatile char *nowhere = (volatile char *)(uintptr_t)16;
    if (!sigsetjmp(jump, 1)) {
        *nowhere = 1;
        CHECK_MSG(false, "no fault");
    }
    victim_size = 40;
    victim = blocks[0];
    expect("1 MiB written past a block, under the program's handler", runaway_up,
           "fitalloc: heap overflow or underflow into the guard page at");
    for (size_t i = 0; i < 6000; i++)
        fa_free(blocks[i]);
    printf("secure/guards: ok\n");
    return 0;
}

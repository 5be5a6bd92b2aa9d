/* buffers: a few big zero-filled buffers, replaced at random.
 *
 * 20 live buffers of 5..25 MiB (uniform, not page multiples), each from calloc, like a
 * program that keeps a handful of large scratch or I/O buffers and replaces one now and then.
 * Each step frees the buffer in a random slot and callocs a new one; in every 4 KiB page it
 * checks that two words are zero (calloc's promise) and then writes them, and the buffer's
 * last word too. The written words are checked before the buffer is freed.
 * This measures how an allocator gets zeroed memory for big blocks: fresh pages from the OS
 * are zero already, while reused memory must be cleared, and returning pages to the OS only
 * to fault them in again costs the same page faults every time.
 * Steps: smoke 60, real (= full) 600.
 * --alloc malloc: the buffers come from malloc instead, and the two words per page are written
 * without the zero check: how an allocator reuses big blocks that need no clearing.
 * --touch sparse: only one page in 64 is used (checked and written): a program that callocs
 * big tables and touches little of them, where clearing a reused block whole costs more than
 * the program's own work.
 *
 * usage: buffers --size smoke|real|full [--alloc calloc|malloc] [--touch all|sparse]
 * prints: ok buffers <checksum>
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/args.h"
#include "lib/pattern.h"
#include "lib/slots.h"

#define USAGE "buffers --size smoke|real|full [--alloc calloc|malloc] [--touch all|sparse]"
#define LIVE 20
#define PAGE 4096
#define MIN_SIZE ((size_t)5 << 20)
#define MAX_SIZE ((size_t)25 << 20)

static size_t page_step = 1; /* pages used: every one, or one in 64 (--touch sparse) */

/* The two words of page `i`: one at its start, one at an offset that moves from page to page
 * (so that a non-zeroed block is caught wherever the old buffer's words fell). */
static size_t second_word(size_t i)
{
    return 8 + 8 * ((i * 37) % (PAGE / 8 - 2)); /* 8..4080: not the last word of a page */
}

static uint64_t word_value(uint64_t tag, size_t off)
{
    return mix64(tag ^ off) | 1; /* never 0: a write must show */
}

static uint64_t get(const unsigned char *p, size_t off)
{
    uint64_t v;
    memcpy(&v, p + off, 8);
    return v;
}

static void put(unsigned char *p, size_t off, uint64_t v)
{
    memcpy(p + off, &v, 8);
}

/* Writes the words that are checked later; first checks the zeroes calloc promised there. */
static void fill(unsigned char *p, size_t n, uint64_t tag, int zeroed)
{
    for (size_t page = 0; page * PAGE + PAGE <= n; page += page_step) {
        size_t a = page * PAGE, b = a + second_word(page);
        if (zeroed && (get(p, a) != 0 || get(p, b) != 0))
            corruption("calloc not zeroed", tag, n, get(p, a) != 0 ? a : b);
        put(p, a, word_value(tag, a));
        put(p, b, word_value(tag, b));
    }
    if (zeroed && get(p, n - 8) != 0)
        corruption("calloc not zeroed", tag, n, n - 8);
    put(p, n - 8, word_value(tag, n - 8));
}

static uint64_t check(const unsigned char *p, size_t n, uint64_t tag)
{
    for (size_t page = 0; page * PAGE + PAGE <= n; page += page_step) {
        size_t a = page * PAGE, b = a + second_word(page);
        if (get(p, a) != word_value(tag, a))
            corruption("page word", tag, n, a);
        if (get(p, b) != word_value(tag, b))
            corruption("page word", tag, n, b);
    }
    if (get(p, n - 8) != word_value(tag, n - 8))
        corruption("tail", tag, n, n - 8);
    return mix64(tag + n);
}

int main(int argc, char **argv)
{
    /* full: these shapes have no original size, so full = real */
    static const char *const keys[] = {"--alloc", "--touch", NULL};
    int real = bench_parse(argc, argv, USAGE, keys) != BENCH_SMOKE;
    const char *alloc = bench_opt(argc, argv, "--alloc", "calloc");
    int use_calloc = strcmp(alloc, "calloc") == 0;
    if (!use_calloc && strcmp(alloc, "malloc") != 0)
        bench_usage(USAGE);
    const char *touch = bench_opt(argc, argv, "--touch", "all");
    if (strcmp(touch, "sparse") == 0)
        page_step = 64;
    else if (strcmp(touch, "all") != 0)
        bench_usage(USAGE);
    rng_seed(0x082efa98ec4e6c89ULL);
    const uint64_t steps = real ? 600 : 60;
    struct slot s[LIVE] = {{0}};
    uint64_t sum = 0;

    for (uint64_t i = 0; i < LIVE + steps; i++) {
        uint64_t r = rng();
        /* the first LIVE steps fill the slots in order, then random replacement */
        struct slot *sl = &s[i < LIVE ? i : r % LIVE];
        sum += slot_release(sl, check);
        size_t n = MIN_SIZE + (size_t)((r >> 8) % (MAX_SIZE - MIN_SIZE + 1));
        n &= ~(size_t)7; /* whole words: the last one is checked */
        unsigned char *p =
            slot_fill(sl, use_calloc ? calloc(1, n) : malloc(n), alloc, n, 16, mix64(i + 1));
        fill(p, n, sl->tag, use_calloc);
    }
    sum += slots_release_all(s, LIVE, check);
    printf("ok buffers %016llx\n", (unsigned long long)sum);
    return 0;
}

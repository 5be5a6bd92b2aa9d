/* ctest labels: errors */
/* Secure mode's check of the slots beside a block at its free (FITALLOC_SECURE=1; the test runs
 * itself again with it set), byte by byte: for blocks of 8, 40, 200 and 2900 bytes, a forked
 * child changes one byte of the slot before or after a block, then frees the block, and must
 * abort with the report. The bytes changed are those the check covers (docs/security.md: the
 * last 64 bytes before the size word of the slot before, the first 64 of the slot after, and
 * both slots' trailers but the size word's low bytes), in each state the slot may be in: a live block (its canary after the
 * request, its tail canary, its trailer), a freed one in the quarantine (a zero link and mark,
 * the zero fill) and one listed again (its link's lowest byte, its mark). A changed byte of a
 * live neighbour's own data, or no change, must not be reported. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "block_set.h"
#include "check.h"
#include "child.h"
#include "fitalloc.h"
#include "rerun.h"

#define COUNT 160
#define FILLERS 300 /* frees that push a block out of the quarantine (256 slots) */
#define WINDOW 64

enum state { LIVE, QUARANTINED, LISTED, STATES };
static const char *const state_name[] = {"live", "quarantined", "listed"};

static char *blocks[COUNT];
static char *flip_at, *to_free;
static char out[4096];
static unsigned children;

static void flip_and_free(void *arg)
{
    (void)arg;
    *flip_at ^= 0x5a; /* neither 0 nor the canary byte (which has its top bit set) */
    fa_free(to_free);
}

static bool allocated(const char *p)
{
    return fa_test_in_blocks(blocks, COUNT, p);
}

/* A block whose slots before and after hold blocks too, none of them taken already. */
static char *middle_of_three(size_t d, char *taken[], size_t ntaken)
{
    for (size_t i = 0; i < COUNT; i++) {
        char *x = blocks[i];
        bool free_of_taken = true;
        for (size_t t = 0; t < ntaken; t++)
            if ((size_t)(x > taken[t] ? x - taken[t] : taken[t] - x) <= 4 * d)
                free_of_taken = false;
        if (free_of_taken && allocated(x + d) && allocated(x + 2 * d))
            return x + d;
    }
    return NULL;
}

/* Change the byte at offset `at` of the slot s beside `block`, then free `block`: a report
 * with `expected` (NULL: no report, the free goes through). */
static void try_byte(char *block, char *s, size_t at, const char *expected, const char *what)
{
    flip_at = s + at;
    to_free = block;
    children++;
    int status = fa_test_run_child(flip_and_free, NULL, out, sizeof out);
    if (!expected) {
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 91 && out[0] == 0,
                  "%s, byte %zu: reported (status %#x): %s", what, at, status, out);
        return;
    }
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
              "%s, byte %zu: not caught (status %#x): %s", what, at, status, out);
    CHECK_MSG(strstr(out, expected) != NULL, "%s, byte %zu: report lacks \"%s\": %s", what, at,
              expected, out);
}

/* Every byte of the slot s (a neighbour of `block`, before it or after it) that the check
 * covers, in the state it is in; n: the size asked for of a live neighbour. */
static void try_slot(char *block, char *s, size_t d, bool before, enum state st, size_t n)
{
    char what[128];
    snprintf(what, sizeof what, "%zu-byte slot %s, %s", d, before ? "before" : "after",
             state_name[st]);
    size_t lo = before && d > WINDOW + 8 ? d - 8 - WINDOW : 0;
    size_t hi = before ? d : (d < WINDOW ? d : WINDOW);
    const char *damaged = before ? "heap underflow" : "heap overflow";
    size_t data_tried = 0;
    for (size_t at = lo; at < d; at++) {
        /* The trailer: its caller word and the size word's check bits and zero top bytes are
         * checked in any slot (its three low bytes hold the size and state, which a change
         * may leave another valid word). */
        bool trailer = at >= d - 16;
        if ((!trailer && at >= hi) || (at >= d - 8 && at < d - 5))
            continue;
        const char *expected = NULL;
        if (trailer) {
            expected = damaged;
        } else if (st == LIVE) {
            size_t canary_end = n + 64 < d - 16 ? n + 64 : d - 16;
            size_t tail = d - 16 > canary_end + 32 ? d - 48 : canary_end;
            if (at < n) { /* the program's own bytes: a few of them, never reported */
                if (data_tried++ >= 4)
                    continue;
            } else if (at < canary_end || at >= tail) {
                expected = damaged;
            } else {
                continue; /* slack no one checks */
            }
        } else {
            /* A listed slot's link may still decode into the page with a byte changed but
             * its lowest (a block's address is 16-byte aligned). */
            if (st == LISTED && at > 0 && at < 8)
                continue;
            expected = "write after free";
        }
        try_byte(block, s, at, expected, what);
    }
}

static void neighbours_of(size_t n)
{
    for (size_t i = 0; i < COUNT; i++) {
        blocks[i] = fa_malloc(n);
        CHECK(blocks[i] != NULL);
    }
    static char *fillers[FILLERS];
    for (size_t i = 0; i < FILLERS; i++) {
        fillers[i] = fa_malloc(1000);
        CHECK(fillers[i] != NULL);
    }
    size_t d = fa_test_slot_size(blocks, COUNT);
    char *middle[STATES];
    for (size_t st = 0; st < STATES; st++) {
        middle[st] = middle_of_three(d, middle, st);
        CHECK_MSG(middle[st] != NULL, "%zu-byte blocks: no three in a row", n);
    }
    /* The listed slots first: pushed out of the quarantine by the fillers' frees. */
    fa_free(middle[LISTED] - d);
    fa_free(middle[LISTED] + d);
    for (size_t i = 0; i < FILLERS; i++)
        fa_free(fillers[i]);
    fa_free(middle[QUARANTINED] - d);
    fa_free(middle[QUARANTINED] + d);
    for (size_t st = 0; st < STATES; st++) {
        try_slot(middle[st], middle[st] - d, d, true, (enum state)st, n);
        try_slot(middle[st], middle[st] + d, d, false, (enum state)st, n);
    }
    for (size_t i = 0; i < COUNT; i++) {
        bool freed = false;
        for (size_t st = LIVE + 1; st < STATES; st++)
            freed |= blocks[i] == middle[st] - d || blocks[i] == middle[st] + d;
        if (!freed)
            fa_free(blocks[i]);
    }
}

int main(int argc, char **argv)
{
    int rc = fa_test_rerun_secure("secure/neighbours", NULL, argv);
    if (rc >= 0)
        return rc;
    (void)argc;
    static const size_t sizes[] = {8, 40, 200, 2900};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        neighbours_of(sizes[i]);
    printf("secure/neighbours: ok (%u children)\n", children);
    return 0;
}

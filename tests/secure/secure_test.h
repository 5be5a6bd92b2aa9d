/* What secure mode's misuse tests share (test_errors.c, test_guards.c): the block each child
 * misuses, set up before the fork, and the check that the child aborts with its report.
 * Header-only, like tests/common. */
#ifndef FITALLOC_TESTS_SECURE_TEST_H
#define FITALLOC_TESTS_SECURE_TEST_H

#include <stddef.h>
#include <stdio.h>

#include "check.h"
#include "child.h"

static char out[8192]; /* the stderr of the last child */
static char *victim;
static size_t victim_size;

/* The child running fn must abort with a report that contains `expected`. */
static void expect(const char *name, void (*fn)(void *), const char *expected)
{
    char what[160];
    snprintf(what, sizeof what, "%s (%zu B)", name, victim_size);
    fa_test_expect_abort(what, fn, NULL, expected, out, sizeof out);
}

#endif

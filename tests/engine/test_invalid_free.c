/* ctest labels: errors */
/* Freeing (or reallocating) a pointer fitalloc never returned must abort with
 * "fitalloc: free(): invalid pointer 0x<hex>" on stderr. Each case runs in a
 * forked child whose stderr goes to a pipe. */
#define _GNU_SOURCE
#include <ctype.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>

#include "check.h"
#include "child.h"
#include "fitalloc.h"

static char global_array[256] __attribute__((aligned(64)));

enum op { OP_FREE, OP_REALLOC };

static char out[8192]; /* the stderr of the last child */

struct bad_call {
    enum op op;
    void *bad;
};

/* The child's work: op(bad), which must not return (the invalid pointer must be detected). */
static void call_bad(void *arg)
{
    const struct bad_call *c = (const struct bad_call *)arg;
    if (c->op == OP_FREE) {
        fa_free(c->bad);
    } else {
        void *volatile q = fa_realloc(c->bad, 200);
        (void)q;
    }
}

static void expect_abort(const char *what, enum op op, void *bad)
{
    struct bad_call call = {op, bad};
    int status = fa_test_run_child(call_bad, &call, out, sizeof out);
    char ptr[64];
    snprintf(ptr, sizeof ptr, "%p", bad);
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
              "%s (%s): child %s %d, stderr: \"%s\"", what, ptr,
              WIFEXITED(status) ? "exited with" : "killed by signal",
              WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), out);

    if (op == OP_FREE) {
        const char *needle = "fitalloc: free(): invalid pointer 0x";
        const char *hit = strcasestr(out, needle);
        CHECK_MSG(hit != NULL, "%s (%s): stderr lacks \"%s\": \"%s\"", what, ptr, needle, out);
        const char *hex = hit + strlen(needle);
        CHECK_MSG(isxdigit((unsigned char)*hex), "%s: no hex digits after 0x: \"%s\"", what, out);
        unsigned long long v = strtoull(hex, NULL, 16);
        CHECK_MSG(v == (unsigned long long)(uintptr_t)bad,
                  "%s: message names 0x%llx, expected %s: \"%s\"", what, v, ptr, out);
    } else {
        CHECK_MSG(strcasestr(out, "invalid pointer") != NULL,
                  "%s (%s): stderr lacks \"invalid pointer\": \"%s\"", what, ptr, out);
        CHECK_MSG(strcasestr(out, "fitalloc:") != NULL,
                  "%s: message does not come from fitalloc: \"%s\"", what, out);
    }
}

int main(void)
{
    char stack_buf[128] __attribute__((aligned(16)));
    memset(stack_buf, 1, sizeof stack_buf);
    unsigned char *small = (unsigned char *)fa_malloc(64);
    CHECK(small != NULL);
    memset(small, 2, 64);
    unsigned char *big = (unsigned char *)fa_malloc((size_t)1 << 20);
    CHECK(big != NULL);
    memset(big, 3, 64);

    expect_abort("free(stack address)", OP_FREE, stack_buf + 16);
    expect_abort("free(p + 8) of a 64-byte block", OP_FREE, small + 8);
    expect_abort("free(p + 16) of a 1 MiB block", OP_FREE, big + 16);
    expect_abort("free(global array)", OP_FREE, global_array + 64);

    expect_abort("realloc(stack address)", OP_REALLOC, stack_buf + 16);
    expect_abort("realloc(p + 8) of a 64-byte block", OP_REALLOC, small + 8);
    expect_abort("realloc(global array)", OP_REALLOC, global_array + 64);

    /* the parent's blocks are unharmed and still freeable */
    CHECK_BYTES(small, 64, 2);
    CHECK_BYTES(big, 64, 3);
    fa_free(small);
    fa_free(big);
    printf("engine/invalid_free: ok\n");
    return 0;
}

/* A call of the trace tests' programs (clock.c, fork.c), logged in static memory as it is made,
 * to be compared with what the trace recorded: its operation (the trace's codes), size, the
 * pointer it was given and the one it returned, and (clock.c) the clock around it. */
#ifndef FA_TESTS_TRACE_CALL_H
#define FA_TESTS_TRACE_CALL_H

#include <stddef.h>
#include <stdint.h>

enum { MALLOC = 1, FREE = 5 };

struct call {
    int op;
    size_t size;
    uintptr_t in, out;
    uint64_t before, after;
};

#endif

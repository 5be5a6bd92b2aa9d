/* FITALLOC_TRACE, the recorder (docs/trace.md), as the allocator layers call it. A call enters
 * the trace through FA_TRACED or FA_TRACED_FREE only: they test _fa_trace_on (one load); a
 * traced call is _fa_trace_enter, the call, _fa_trace_record, _fa_trace_leave. */
#ifndef FA_TRACE_RECORD_H
#define FA_TRACE_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/compiler.h"

extern bool _fa_trace_on;   /* tracing, or not decided yet (the process has not started) */
extern bool _fa_tracing;    /* tracing: every page is slow and calls are recorded */
bool _fa_trace_start(void); /* once the options are read: opens the file; true if tracing */
bool _fa_trace_enter(void); /* false: not tracing, or a call made inside a traced call */
/* op: enum fa_trace_op; alignment: the alignment asked for (0: the default). */
void _fa_trace_record(uint8_t op, uint64_t size, size_t alignment, const void *in, const void *out);
void _fa_trace_leave(void);
void _fa_trace_point(void); /* a free inside a traced call: the call takes its number now */
/* A free about to be made: recorded now (true: the caller leaves the trace once it is done),
 * or, inside a traced call, that call's time taken (false). */
bool _fa_trace_free_begin(const void *p, const char *caller, size_t size);
void _fa_trace_thread_exit(void);
void _fa_trace_process_exit(void);
void _fa_trace_fork_child(void);
void _fa_trace_fatal(void); /* before a report's abort: write what can be written at once */

/* The value of `call` (of type `type`), which is recorded while tracing: op, size and alignment
 * as _fa_trace_record takes them, `in` the block passed, `out` the block returned (an
 * expression that may name the call's value as `traced`). */
#define FA_TRACED(type, call, op, size, alignment, in, out)                                        \
    __extension__({                                                                                \
        type traced;                                                                               \
        if (fa_unlikely(_fa_trace_on) && _fa_trace_enter()) {                                      \
            traced = (call);                                                                       \
            _fa_trace_record((op), (size), (alignment), (in), (out));                              \
            _fa_trace_leave();                                                                     \
        } else {                                                                                   \
            traced = (call);                                                                       \
        }                                                                                          \
        traced;                                                                                    \
    })

/* The statement `call`, a free of p that caller made, recorded before it is done (when a
 * report stops the program, the free reported is the trace's last call). */
#define FA_TRACED_FREE(call, p, caller, size)                                                      \
    do {                                                                                           \
        if (fa_unlikely(_fa_trace_on) && _fa_trace_free_begin((p), (caller), (size))) {            \
            call;                                                                                  \
            _fa_trace_leave();                                                                     \
        } else {                                                                                   \
            call;                                                                                  \
        }                                                                                          \
    } while (0)

#endif

/* FITALLOC_TRACE, the recorder (docs/trace.md), as the allocator layers call it. An entry point
 * tests _fa_trace_on (one load); a traced call is _fa_trace_enter, the call, _fa_trace_record,
 * _fa_trace_leave. */
#ifndef FA_TRACE_RECORD_H
#define FA_TRACE_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

extern bool _fa_trace_on;   /* tracing, or not decided yet (the process has not started) */
extern bool _fa_tracing;    /* tracing: every page is slow and calls are recorded */
bool _fa_trace_start(void); /* once the options are read: opens the file; true if tracing */
bool _fa_trace_enter(void); /* false: not tracing, or a call made inside a traced call */
/* op: enum fa_trace_op; alignment: the alignment asked for (0: the default). */
void _fa_trace_record(uint8_t op, uint64_t size, size_t alignment, const void *in, const void *out);
void _fa_trace_leave(void);
void _fa_trace_point(void); /* a free inside a traced call: the call takes its number now */
uint8_t _fa_trace_free_op(const char *caller); /* the op of a free, by the caller's name */
void _fa_trace_thread_exit(void);
void _fa_trace_process_exit(void);
void _fa_trace_fork_child(void);
void _fa_trace_fatal(void); /* before a report's abort: write what can be written at once */

#endif

/* --dump: the trace's records in program order, one line each (docs/replay.md). */
#ifndef FA_REPLAY_DUMP_H
#define FA_REPLAY_DUMP_H

#include <stdio.h>

#include "trace_reader.h"

/* "seq time_ns thread op size align in out" per record. */
void dump_records(FILE *out, const struct trace *t);

#endif

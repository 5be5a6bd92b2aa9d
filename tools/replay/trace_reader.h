/* The validating reader of a trace file (include/fitalloc-trace.h): checks the header and
 * every record, and hands the records back in program order (sorted by seq).
 *
 * A file cut short is read up to its last complete record (a warning names the partial one);
 * anything else that is wrong — a bad magic, version or size field, a record whose check byte,
 * op or alignment is wrong, two records with the same seq — makes the whole file unreadable,
 * with a message naming the byte offset of the first bad field.
 */
#ifndef FA_REPLAY_TRACE_READER_H
#define FA_REPLAY_TRACE_READER_H

#include <stddef.h>
#include <stdint.h>

#include "fitalloc-trace.h"

struct trace {
    const char *path;
    struct fa_trace_header header;
    struct fa_trace_record *records; /* program order: records[i] is operation i */
    size_t count;
    uint32_t threads; /* highest thread number + 1 (0 for an empty trace) */
    uint64_t lost;    /* numbers missing from seq between the first and the last record */
    /* The mapping that holds the records (replay_mem.h). */
    void *mapping;
    size_t mapping_bytes;
};

/* Read and check path. 0 on success; -1 after printing "fitalloc-replay: PATH: ..." to
 * stderr. */
int trace_read(const char *path, struct trace *t);
void trace_release(struct trace *t);

/* The name of an op ("malloc", "new[]", ...), "?" for a value outside the enum. */
const char *trace_op_name(unsigned op);

#endif

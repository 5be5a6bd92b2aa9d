/* The validating reader of a trace file (include/fitalloc-trace.h): checks the header, every
 * block and every record, and hands the records back decoded, in program order (by time, then
 * thread: program_order.h), numbered in that order (seq).
 *
 * A file cut short is read up to its last complete record (a warning names the block cut
 * short, whose records cannot be checked against its checksum); anything else that is wrong —
 * a bad magic, version or size field, a block whose tag, checksum, record count or numbering
 * is wrong, a record whose op or alignment is wrong or that goes past its block, two records
 * of a thread with the same time — makes the whole file unreadable, with a message naming the
 * byte offset of the first bad field, block or record.
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
    uint64_t lost;    /* records missing from the threads' numbering (lost buffers) */
    /* The mapping that holds the decoded records (replay_mem.h). */
    void *mapping;
    size_t mapping_bytes;
};

/* Read and check path. 0 on success; -1 after printing "fitalloc-replay: PATH: ..." to
 * stderr. */
int trace_read(const char *path, struct trace *t);
/* The same for a trace already in memory (size bytes at `bytes`, which must stay until
 * trace_read_bytes returns); `name` stands for the path in messages. */
int trace_read_bytes(const void *bytes, size_t size, const char *name, struct trace *t);
void trace_release(struct trace *t);

/* The name of an op ("malloc", "new[]", ...), "?" for a value outside the enum. */
const char *trace_op_name(unsigned op);

#endif

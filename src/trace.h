/* The recorder of FITALLOC_TRACE as its three files see each other: trace.c (the calls, their
 * numbers, the threads), trace_buffer.c (the per-thread buffers), trace_file.c (the file).
 * The rest of the library uses the _fa_trace_* functions of internal.h. */
#ifndef FA_TRACE_H
#define FA_TRACE_H

#include "fitalloc-trace.h"
#include "internal.h"

/* ---- trace_file.c ---- */

/* Open the file FITALLOC_TRACE names (or path.PID when a running process writes that one:
 * docs/trace.md) and write its header; false, after one warning on stderr, if it cannot be. */
bool _fa_trace_file_open(const char *path, uint64_t start_ns, uint32_t mode);
/* Append whole records. After a failed write one warning is printed and nothing more is
 * written (the file stays readable up to its last complete record). */
void _fa_trace_file_write(const void *records, size_t bytes);
/* In a fork child: the same trace goes on in a new file, path.PID, with parent_pid set. */
void _fa_trace_file_fork_child(void);

/* ---- trace_buffer.c ---- */

#define FA_TRACE_BUFFER_BYTES ((size_t)64 << 10)
#define FA_TRACE_BUFFER_HEAD 64
#define FA_TRACE_BUFFER_RECORDS                                                                    \
    ((FA_TRACE_BUFFER_BYTES - FA_TRACE_BUFFER_HEAD) / sizeof(struct fa_trace_record))

/* One thread's records on their way to the file (64 KiB mapped from the OS). */
struct fa_trace_buffer {
    struct fa_trace_buffer *all_next; /* the list of every buffer (never unmapped) */
    uint32_t in_use;                  /* a thread's; 0: free for the next thread */
    uint32_t lock;                    /* held while the records are written to the file */
    uint32_t committed;               /* complete records: written by the owner, release */
    uint32_t flushed;                 /* records already in the file (under `lock`) */
    uint8_t pad[FA_TRACE_BUFFER_HEAD - 24];
    struct fa_trace_record records[FA_TRACE_BUFFER_RECORDS];
};
_Static_assert(sizeof(struct fa_trace_buffer) <= FA_TRACE_BUFFER_BYTES, "a buffer fits its map");

/* A free buffer for the calling thread, or NULL when the OS has no memory. */
struct fa_trace_buffer *_fa_trace_buffer_take(void);
/* At the owner's exit: write its records and let another thread have it. */
void _fa_trace_buffer_give_back(struct fa_trace_buffer *buffer);
/* The owner fills the slot _fa_trace_buffer_slot gives (a full buffer is written to the file
 * first), then publishes it with _fa_trace_buffer_commit. */
void _fa_trace_buffer_make_room(struct fa_trace_buffer *buffer);
static inline struct fa_trace_record *fa_trace_buffer_slot(struct fa_trace_buffer *buffer)
{
    uint32_t slot = __atomic_load_n(&buffer->committed, __ATOMIC_RELAXED);
    if (fa_unlikely(slot == FA_TRACE_BUFFER_RECORDS)) {
        _fa_trace_buffer_make_room(buffer);
        slot = 0;
    }
    return &buffer->records[slot];
}
static inline void fa_trace_buffer_commit(struct fa_trace_buffer *buffer)
{
    uint32_t slot = __atomic_load_n(&buffer->committed, __ATOMIC_RELAXED);
    __atomic_store_n(&buffer->committed, slot + 1, __ATOMIC_RELEASE);
}
/* Write the owner's records now (the owner only). */
void _fa_trace_buffer_flush(struct fa_trace_buffer *buffer);
/* Write the complete records of every buffer, from any thread. tries > 0: give up on a buffer
 * whose lock is still held after that many attempts (a report about to abort must not wait). */
void _fa_trace_buffers_flush_all(unsigned tries);
/* In a fork child: every record buffered is the parent's (the parent writes it): drop them all;
 * the buffers of the threads that did not come across become free. */
void _fa_trace_buffers_after_fork(struct fa_trace_buffer *mine);

#endif

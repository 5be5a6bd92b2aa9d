/* The recorder of FITALLOC_TRACE as its four files see each other: trace.c (the calls, the
 * threads, the encoding of a record), order.c (the time each call takes, which orders
 * them), buffer.c (the per-thread buffers and the blocks they are written as), file.c (the
 * file). The rest of the library uses the _fa_trace_* functions of record.h. */
#ifndef FA_TRACE_H
#define FA_TRACE_H

#include "fitalloc-trace.h"
#include "common/message.h"
#include "common/mode.h"
#include "common/process.h"
#include "platform/arch.h"
#include "platform/compiler.h"
#include "platform/os.h"
#include "trace/record.h"
#include "platform/atomic.h"

/* A thread reads the clock at least every FA_TRACE_CLOCK_PERIOD calls, and at every call while
 * its calls are more than FA_TRACE_SLOW_CALL_NS apart on average (docs/trace.md, "Order"). */
#define FA_TRACE_CLOCK_PERIOD 64
#define FA_TRACE_SLOW_CALL_NS 1000
/* The calls on the blocks of one address region (2^FA_TRACE_REGION_SHIFT bytes: a small page)
 * are ordered through its stamp, one of FA_TRACE_STAMPS. */
#define FA_TRACE_REGION_SHIFT 16
#define FA_TRACE_STAMPS 4096

/* ---- order.c: the time of each call, which orders them (docs/trace.md, "Order") ---- */

/* A thread's clock: its last reading of CLOCK_MONOTONIC, and when it reads it next. */
struct fa_trace_clock {
    uint64_t reading;       /* ns since the trace's start */
    uint16_t period;        /* calls between two readings */
    uint16_t until_reading; /* calls left before the next reading (0: at the next call) */
};
void _fa_trace_order_start(uint64_t start_ns);
void _fa_trace_clock_read(struct fa_trace_clock *clock);
/* The time of a call a thread makes now, from its clock alone: after its previous call's. */
static inline uint64_t fa_trace_clock_now(struct fa_trace_clock *clock, uint64_t previous)
{
    if (fa_unlikely(clock->until_reading == 0))
        _fa_trace_clock_read(clock);
    clock->until_reading--;
    return clock->reading > previous ? clock->reading : previous + 1;
}

/* The stamp of each address region: later than every call made on a block there. */
extern uint64_t _fa_trace_stamps[FA_TRACE_STAMPS];
/* Later than every call that freed a block without naming it (_fa_trace_point_time). Alone in
 * its cache line: written by moving reallocs only, read by every allocation. */
struct fa_trace_line {
    uint64_t value;
    uint8_t pad[56];
};
extern struct fa_trace_line _fa_trace_points;
static inline uint64_t fa_trace_after_points(uint64_t time)
{
    uint64_t points = fa_atomic_load_relaxed(&_fa_trace_points.value);
    return points < time ? time : points + 1;
}

static inline uint64_t *fa_trace_stamp_of(uint64_t address)
{
    return &_fa_trace_stamps[(address >> FA_TRACE_REGION_SHIFT) % FA_TRACE_STAMPS];
}
/* A call on a block at `address` at `time` or later: its time, after the region's stamp, which
 * it becomes. */
static inline uint64_t fa_trace_stamp_sync(uint64_t time, uint64_t address)
{
    uint64_t *stamp = fa_trace_stamp_of(address);
    uint64_t seen = fa_atomic_load_relaxed(stamp);
    do
        time = seen < time ? time : seen + 1;
    while (!fa_atomic_cas_weak_relaxed(stamp, &seen, time));
    return time;
}
/* The region's stamp at least `time` (a call whose time was fixed earlier). */
void _fa_trace_stamp_raise(uint64_t time, uint64_t address);
/* The time of a call that frees a block it cannot name (a realloc's old block): read from the
 * clock, the stamp of every region can only be earlier. */
uint64_t _fa_trace_point_time(struct fa_trace_clock *clock, uint64_t previous);

/* ---- file.c ---- */

/* Open the file FITALLOC_TRACE names (or path.PID when a running process writes that one:
 * docs/trace.md) and write its header; false, after one warning on stderr, if it cannot be. */
bool _fa_trace_file_open(const char *path, uint64_t start_ns, uint32_t mode);
/* Append whole blocks. After a failed write one warning is printed and nothing more is
 * written (the file stays readable up to its last complete record). */
void _fa_trace_file_write(const void *blocks, size_t bytes);
/* In a fork child: the same trace goes on in a new file, path.PID, with parent_pid set. */
void _fa_trace_file_fork_child(void);

/* ---- buffer.c ---- */

#define FA_TRACE_BUFFER_BYTES ((size_t)64 << 10)
#define FA_TRACE_BUFFER_HEAD 64
/* Records start this far into `bytes`: a block's header is written just before its records. */
#define FA_TRACE_BLOCK_ROOM sizeof(struct fa_trace_block)
#define FA_TRACE_BUFFER_DATA                                                                       \
    ((uint32_t)(FA_TRACE_BUFFER_BYTES - FA_TRACE_BUFFER_HEAD - FA_TRACE_BLOCK_ROOM))

/* One thread's encoded records on their way to the file (64 KiB mapped from the OS). Positions
 * count bytes of records: record bytes [a, b) are at bytes[FA_TRACE_BLOCK_ROOM + a], and the
 * block that writes them has its header at bytes[a], over records already written. */
struct fa_trace_buffer {
    struct fa_trace_buffer *all_next; /* the list of every buffer (never unmapped) */
    uint32_t in_use;                  /* a thread's; 0: free for the next thread */
    uint32_t lock;                    /* held while a block is written to the file */
    uint32_t committed;               /* bytes of complete records: the owner's, release */
    uint32_t flushed;                 /* bytes already in the file (under `lock`) */
    uint32_t thread;                  /* the owner's number (under `lock`) */
    uint32_t unused[3];
    struct fa_trace_state base; /* the decoder's state at `flushed` (under `lock`) */
    uint64_t base_index;        /* the thread's number of the record at `flushed` (under `lock`) */
    uint8_t bytes[FA_TRACE_BLOCK_ROOM + FA_TRACE_BUFFER_DATA];
};
_Static_assert(sizeof(struct fa_trace_buffer) == FA_TRACE_BUFFER_BYTES, "a buffer fills its map");
_Static_assert(offsetof(struct fa_trace_buffer, bytes) == FA_TRACE_BUFFER_HEAD, "buffer head");

/* Where a thread is in the file: the decoder's state after its last record, and how many
 * records it has there. */
struct fa_trace_position {
    struct fa_trace_state state;
    uint64_t index;
};

/* A free buffer for the calling thread (its number; `at`: where its next record goes), or NULL
 * when the OS has no memory. */
struct fa_trace_buffer *_fa_trace_buffer_take(uint32_t thread, const struct fa_trace_position *at);
/* At the owner's exit: write its records (`last`: where its next record would go) and let
 * another thread have it. */
void _fa_trace_buffer_give_back(struct fa_trace_buffer *buffer,
                                const struct fa_trace_position *last);
/* The owner encodes a record at fa_trace_buffer_room (FA_TRACE_RECORD_MAX bytes; a buffer too
 * full is written to the file first, `last` being where the record goes), then publishes it
 * with fa_trace_buffer_commit. */
void _fa_trace_buffer_make_room(struct fa_trace_buffer *buffer,
                                const struct fa_trace_position *last);
static inline uint8_t *fa_trace_buffer_room(struct fa_trace_buffer *buffer,
                                            const struct fa_trace_position *last, bool *emptied)
{
    uint32_t at = fa_atomic_load_relaxed(&buffer->committed);
    if (fa_unlikely(at > FA_TRACE_BUFFER_DATA - FA_TRACE_RECORD_MAX)) {
        _fa_trace_buffer_make_room(buffer, last);
        *emptied = true;
        at = 0;
    }
    return &buffer->bytes[FA_TRACE_BLOCK_ROOM + at];
}
static inline void fa_trace_buffer_commit(struct fa_trace_buffer *buffer, const uint8_t *end)
{
    fa_atomic_store_release(&buffer->committed,
                            (uint32_t)(end - &buffer->bytes[FA_TRACE_BLOCK_ROOM]));
}
/* Write the owner's records now (the owner only; `last`: where its next record goes). */
void _fa_trace_buffer_flush(struct fa_trace_buffer *buffer, const struct fa_trace_position *last);
/* Write the complete records of every buffer, from any thread. tries > 0: give up on a buffer
 * whose lock is still held after that many attempts (a report about to abort must not wait). */
void _fa_trace_buffers_flush_all(unsigned tries);
/* In a fork child: every record buffered is the parent's (the parent writes it): drop them all;
 * the buffers of the threads that did not come across become free. */
void _fa_trace_buffers_after_fork(struct fa_trace_buffer *mine,
                                  const struct fa_trace_position *last);
/* Make the records at at + FA_TRACE_BLOCK_ROOM (`bytes` of them, `records` records of `thread`
 * that decode from `before`) a block: its header at `at`, checksum included. The block's length
 * with its header. */
size_t _fa_trace_block_seal(uint8_t *at, uint32_t thread, uint32_t records, uint32_t bytes,
                            const struct fa_trace_position *before);

#endif

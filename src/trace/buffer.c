/* FITALLOC_TRACE's per-thread buffers of encoded records, and the blocks they are written as
 * (docs/trace.md; the format is include/fitalloc-trace.h).
 *
 * A thread appends to its own buffer without a lock: it encodes a record after `committed`,
 * then publishes it by storing the new end with release order. Whoever writes a buffer to the
 * file (its thread when the buffer is full or at thread exit; any thread at process exit or
 * before a report aborts) holds the buffer's lock and writes the bytes from `flushed` up to
 * `committed`, read with acquire order, as one block: a block header placed just before them,
 * over bytes already written, and the records, in one write(2). The record being encoded is
 * never among them, so a buffer written while its thread goes on recording gives no torn
 * record. Only the owner empties a buffer, under the lock.
 *
 * Each block decodes on its own: its header carries the decoder's state before its first
 * record (`base`). The owner knows it (its own state, passed in); a thread that writes another
 * thread's records decodes them to learn where the next block starts from, which only the exit
 * and report paths do.
 *
 * Buffers come from the OS, never from malloc. They are kept on a list of every buffer (pushed
 * with compare-and-swap, never removed, never unmapped), which the process-exit and report
 * paths walk without a lock, and a buffer whose thread has ended is taken by the next new one.
 */
#include "platform/arch.h"
#include "trace/trace.h"
#include "platform/atomic.h"

static struct fa_trace_buffer *all_buffers;

/* The lock is held only across one write(2); tries 0 waits for it. */
static bool lock_buffer(struct fa_trace_buffer *buffer, unsigned tries)
{
    for (unsigned i = 0;; i++) {
        if (!fa_atomic_exchange_acquire(&buffer->lock, 1))
            return true;
        if (tries && i + 1 >= tries)
            return false;
        fa_cpu_relax();
    }
}

static void unlock_buffer(struct fa_trace_buffer *buffer)
{
    fa_atomic_store_release(&buffer->lock, 0);
}

size_t _fa_trace_block_seal(uint8_t *at, uint32_t thread, uint32_t records, uint32_t bytes,
                            const struct fa_trace_position *before)
{
    struct fa_trace_block block = {
        .tag = FA_TRACE_BLOCK_TAG,
        .thread = thread,
        .records = records,
        .bytes = bytes,
        .index = before->index,
        .time_ns = before->state.time_ns,
        .pointer = before->state.pointer,
    };
    block.checksum = fa_trace_block_checksum(&block, at + sizeof block);
    memcpy(at, &block, sizeof block);
    return sizeof block + bytes;
}

/* With the lock held: the bytes [flushed, end) as one block of `records` records. */
static void write_block(struct fa_trace_buffer *buffer, uint32_t end, uint32_t records)
{
    uint32_t start = buffer->flushed;
    uint8_t *at = &buffer->bytes[start];
    struct fa_trace_position base = {buffer->base, buffer->base_index};
    size_t length = _fa_trace_block_seal(at, buffer->thread, records, end - start, &base);
    _fa_trace_file_write(at, length);
    buffer->flushed = end;
    buffer->base_index += records;
}

/* With the lock held, from a thread that does not own the buffer: its complete records not
 * written yet. Decoding them gives their count and the state the next block starts from. */
static void write_pending_of_other(struct fa_trace_buffer *buffer)
{
    uint32_t end = fa_atomic_load_acquire(&buffer->committed);
    const uint8_t *data = &buffer->bytes[FA_TRACE_BLOCK_ROOM];
    const uint8_t *p = data + buffer->flushed;
    struct fa_trace_state state = buffer->base;
    uint32_t records = 0;
    struct fa_trace_record r;
    while (fa_trace_decode(&state, &p, data + end, &r) == FA_TRACE_DECODED)
        records++;
    if (!records)
        return;
    write_block(buffer, (uint32_t)(p - data), records);
    buffer->base = state;
}

/* The owner writes its records and starts the buffer again from its first byte. `last` is
 * where its next record goes: the records not written yet are those since `base_index`, and
 * the next block starts from there. */
static void flush_and_empty(struct fa_trace_buffer *buffer, const struct fa_trace_position *last)
{
    lock_buffer(buffer, 0);
    uint32_t end = fa_atomic_load_relaxed(&buffer->committed);
    if (end > buffer->flushed)
        write_block(buffer, end, (uint32_t)(last->index - buffer->base_index));
    buffer->flushed = 0;
    buffer->base = last->state;
    buffer->base_index = last->index;
    fa_atomic_store_relaxed(&buffer->committed, 0);
    unlock_buffer(buffer);
}

struct fa_trace_buffer *_fa_trace_buffer_take(uint32_t thread, const struct fa_trace_position *at)
{
    struct fa_trace_buffer *buffer = fa_atomic_load_acquire(&all_buffers);
    for (; buffer; buffer = buffer->all_next) {
        uint32_t free_state = 0;
        if (!fa_atomic_load_relaxed(&buffer->in_use) &&
            fa_atomic_cas_acquire(&buffer->in_use, &free_state, 1)) {
            lock_buffer(buffer, 0); /* an exit or report path may be reading it */
            buffer->thread = thread;
            buffer->base = at->state;
            buffer->base_index = at->index;
            unlock_buffer(buffer);
            return buffer;
        }
    }
    buffer = _fa_os_map_aligned(FA_TRACE_BUFFER_BYTES, FA_OS_PAGE);
    if (!buffer)
        return NULL;
    buffer->in_use = 1; /* the rest of a new mapping reads as zero: an empty buffer */
    buffer->thread = thread;
    buffer->base = at->state;
    buffer->base_index = at->index;
    struct fa_trace_buffer *head = fa_atomic_load_relaxed(&all_buffers);
    do
        buffer->all_next = head;
    while (!fa_atomic_cas_weak_release(&all_buffers, &head, buffer));
    return buffer;
}

void _fa_trace_buffer_give_back(struct fa_trace_buffer *buffer,
                                const struct fa_trace_position *last)
{
    flush_and_empty(buffer, last);
    fa_atomic_store_release(&buffer->in_use, 0);
}

void _fa_trace_buffer_make_room(struct fa_trace_buffer *buffer,
                                const struct fa_trace_position *last)
{
    flush_and_empty(buffer, last);
}

void _fa_trace_buffer_flush(struct fa_trace_buffer *buffer, const struct fa_trace_position *last)
{
    flush_and_empty(buffer, last);
}

void _fa_trace_buffers_flush_all(unsigned tries)
{
    struct fa_trace_buffer *buffer = fa_atomic_load_acquire(&all_buffers);
    for (; buffer; buffer = buffer->all_next) {
        if (!lock_buffer(buffer, tries))
            continue;
        write_pending_of_other(buffer);
        unlock_buffer(buffer);
    }
}

void _fa_trace_buffers_after_fork(struct fa_trace_buffer *mine,
                                  const struct fa_trace_position *last)
{
    struct fa_trace_buffer *buffer = fa_atomic_load_acquire(&all_buffers);
    for (; buffer; buffer = buffer->all_next) {
        buffer->flushed = 0;
        if (buffer == mine) {
            buffer->base = last->state;
            buffer->base_index = last->index;
        }
        fa_atomic_store_relaxed(&buffer->committed, 0);
        fa_atomic_store_relaxed(&buffer->lock, 0);
        fa_atomic_store_relaxed(&buffer->in_use, buffer == mine);
    }
}

/* FITALLOC_TRACE's per-thread buffers of records (docs/trace.md).
 *
 * A thread appends to its own buffer without a lock: it fills the slot at `committed`, then
 * publishes it by storing committed + 1 with release order. Whoever writes a buffer to the file
 * (its thread when the buffer is full or at thread exit; any thread at process exit or before a
 * report aborts) holds the buffer's lock and writes the records from `flushed` up to
 * `committed`, read with acquire order. The slot being filled is never among them, so a buffer
 * written while its thread goes on recording gives no torn record. Only the owner empties a
 * buffer, under the lock.
 *
 * Buffers come from the OS, never from malloc. They are kept on a list of every buffer (pushed
 * with compare-and-swap, never removed, never unmapped), which the process-exit and report
 * paths walk without a lock, and a buffer whose thread has ended is taken by the next new one.
 */
#include "trace.h"

static struct fa_trace_buffer *all_buffers;

/* The lock is held only across one write(2); tries 0 waits for it. */
static bool lock_buffer(struct fa_trace_buffer *buffer, unsigned tries)
{
    for (unsigned i = 0;; i++) {
        if (!__atomic_exchange_n(&buffer->lock, 1, __ATOMIC_ACQUIRE))
            return true;
        if (tries && i + 1 >= tries)
            return false;
        __builtin_ia32_pause();
    }
}

static void unlock_buffer(struct fa_trace_buffer *buffer)
{
    __atomic_store_n(&buffer->lock, 0, __ATOMIC_RELEASE);
}

/* With the lock held: the complete records not written yet go to the file. */
static void write_pending(struct fa_trace_buffer *buffer)
{
    uint32_t end = __atomic_load_n(&buffer->committed, __ATOMIC_ACQUIRE);
    uint32_t start = buffer->flushed;
    if (end > start)
        _fa_trace_file_write(&buffer->records[start],
                             (end - start) * sizeof(struct fa_trace_record));
    buffer->flushed = end;
}

/* The owner writes its records and starts the buffer again from its first slot. */
static void flush_and_empty(struct fa_trace_buffer *buffer)
{
    lock_buffer(buffer, 0);
    write_pending(buffer);
    buffer->flushed = 0;
    __atomic_store_n(&buffer->committed, 0, __ATOMIC_RELAXED);
    unlock_buffer(buffer);
}

struct fa_trace_buffer *_fa_trace_buffer_take(void)
{
    struct fa_trace_buffer *buffer = __atomic_load_n(&all_buffers, __ATOMIC_ACQUIRE);
    for (; buffer; buffer = buffer->all_next) {
        uint32_t free_state = 0;
        if (!__atomic_load_n(&buffer->in_use, __ATOMIC_RELAXED) &&
            __atomic_compare_exchange_n(&buffer->in_use, &free_state, 1, false, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return buffer;
    }
    buffer = _fa_os_map_aligned(FA_TRACE_BUFFER_BYTES, FA_OS_PAGE);
    if (!buffer)
        return NULL;
    buffer->in_use = 1; /* the rest of a new mapping reads as zero: an empty buffer */
    struct fa_trace_buffer *head = __atomic_load_n(&all_buffers, __ATOMIC_RELAXED);
    do
        buffer->all_next = head;
    while (!__atomic_compare_exchange_n(&all_buffers, &head, buffer, true, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED));
    return buffer;
}

void _fa_trace_buffer_give_back(struct fa_trace_buffer *buffer)
{
    flush_and_empty(buffer);
    __atomic_store_n(&buffer->in_use, 0, __ATOMIC_RELEASE);
}

void _fa_trace_buffer_make_room(struct fa_trace_buffer *buffer)
{
    flush_and_empty(buffer);
}

void _fa_trace_buffer_flush(struct fa_trace_buffer *buffer)
{
    flush_and_empty(buffer);
}

void _fa_trace_buffers_flush_all(unsigned tries)
{
    struct fa_trace_buffer *buffer = __atomic_load_n(&all_buffers, __ATOMIC_ACQUIRE);
    for (; buffer; buffer = buffer->all_next) {
        if (!lock_buffer(buffer, tries))
            continue;
        write_pending(buffer);
        unlock_buffer(buffer);
    }
}

void _fa_trace_buffers_after_fork(struct fa_trace_buffer *mine)
{
    struct fa_trace_buffer *buffer = __atomic_load_n(&all_buffers, __ATOMIC_ACQUIRE);
    for (; buffer; buffer = buffer->all_next) {
        buffer->flushed = 0;
        __atomic_store_n(&buffer->committed, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&buffer->lock, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&buffer->in_use, buffer == mine, __ATOMIC_RELAXED);
    }
}

/* FITALLOC_TRACE=path: a record of every allocation call the program makes (docs/trace.md;
 * the format is include/fitalloc-trace.h).
 *
 * While tracing, every page is slow (types.h: never in a direct slot, a thread word of 0,
 * FA_OWNER_SLOW in its owner word), so every malloc and free leaves the inline fast paths,
 * which stay exactly as they are, and reaches the out-of-line paths that record. Each entry
 * point the program can call records its own call: _fa_trace_enter, the call,
 * _fa_trace_record, _fa_trace_leave. The calls it makes inside (calloc's malloc, realloc's
 * malloc and free, operator new's) find the thread already in a traced call and are not
 * recorded: one record per call of the program.
 *
 * Order: each call takes a time (order.c) that is later than every earlier call on its
 * blocks. An allocation takes it once its block exists and a free before its block is given
 * back, so a block freed by one thread and handed out to another is freed first in the order.
 * A realloc that moves takes it when it frees its old block (_fa_trace_point).
 *
 * A record is encoded as deltas from the thread's previous one (the format's header comment):
 * a few bytes where a record of fixed fields takes 48.
 */
#include <errno.h>
#include <string.h>

#include "common/options.h"
#include "trace/trace.h"
#include "platform/atomic.h"

/* True until the start decides: an entry point called before the process has started asks
 * _fa_trace_enter, which starts it, so that even the first call is recorded as what it is. */
bool _fa_trace_on = true;
bool _fa_tracing;
/* Read by every traced call, written at the start, the exit and a fork: a cache line of their
 * own, apart from anything the other paths write. */
static struct {
    bool decided;
    bool tracing; /* _fa_tracing */
    /* The process is exiting: every buffer has been written once; records go out one by one. */
    bool exiting;
    uint8_t pad[61];
} flags __attribute__((aligned(64)));
static uint32_t threads_seen;

struct fa_trace_thread {
    struct fa_trace_buffer *buffer;
    struct fa_trace_position last; /* after the previous record: the next one is encoded from it */
    struct fa_trace_clock clock;
    uint64_t time_ns; /* the current call's time, once `timed` */
    uint32_t number;  /* this thread's number + 1 (0: no call yet) */
    bool busy;        /* in a traced call: the calls made inside it are not recorded */
    bool timed;       /* the current call took its time at a point inside it */
    bool ended;       /* past the thread-exit hook: records go straight to the file */
};
static __thread struct fa_trace_thread self __attribute__((tls_model("initial-exec")));

bool _fa_trace_start(void)
{
    if (flags.decided)
        return _fa_tracing;
    const char *path = fa_option_str(trace);
    if (path) {
        uint64_t start_ns = _fa_os_now_ns();
        _fa_trace_order_start(start_ns);
        _fa_tracing = _fa_trace_file_open(path, start_ns, _fa_mode->trace_id);
    }
    _fa_trace_on = _fa_tracing;
    flags.tracing = _fa_tracing;
    fa_atomic_store_release(&flags.decided, true);
    return _fa_tracing;
}

bool _fa_trace_enter(void)
{
    if (fa_unlikely(!fa_atomic_load_acquire(&flags.decided)))
        _fa_process_init(); /* the first call of the process: tracing is decided at its start */
    if (!flags.tracing || self.busy)
        return false;
    self.busy = true;
    self.timed = false;
    return true;
}

void _fa_trace_point(void)
{
    if (flags.tracing && self.busy && !self.timed) {
        self.time_ns = _fa_trace_point_time(&self.clock, self.last.state.time_ns);
        self.timed = true;
    }
}

/* The hot path is one function: these are inlined into it. */
#define FA_TRACE_INLINE inline __attribute__((always_inline))

/* A call whose time was fixed at its point: the stamps of its blocks' regions catch up. */
static FA_COLD uint64_t time_fixed_at_point(struct fa_trace_thread *t, uint64_t in, uint64_t out)
{
    if (in)
        _fa_trace_stamp_raise(t->time_ns, in);
    if (out)
        _fa_trace_stamp_raise(t->time_ns, out);
    return t->time_ns;
}

/* A realloc that kept its block or failed: both its blocks order it. */
static FA_COLD uint64_t time_of_both(uint64_t time, uint64_t in, uint64_t out)
{
    time = fa_trace_stamp_sync(fa_trace_after_points(time), out);
    uint64_t synced = fa_trace_stamp_sync(time, in);
    if (synced != time) /* later than out's stamp now: it catches up */
        _fa_trace_stamp_raise(synced, out);
    return synced;
}

/* The time of the call on `in` and `out` (0: none) the thread is recording. */
static FA_TRACE_INLINE uint64_t time_of_call(struct fa_trace_thread *t, uint64_t in, uint64_t out)
{
    if (fa_unlikely(t->timed))
        return time_fixed_at_point(t, in, out);
    uint64_t time = fa_trace_clock_now(&t->clock, t->last.state.time_ns);
    if (fa_unlikely(in && out))
        return time_of_both(time, in, out);
    if (out)
        return fa_trace_stamp_sync(fa_trace_after_points(time), out);
    if (in)
        return fa_trace_stamp_sync(time, in);
    return time;
}

static FA_TRACE_INLINE uint8_t log2_ceil(size_t x)
{
    return x > 1 ? (uint8_t)(64 - __builtin_clzll((unsigned long long)x - 1)) : 0;
}

static FA_TRACE_INLINE uint8_t *put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* A pointer delta in units of 2^unit_log2 bytes (it is a multiple of them), zigzag-encoded. */
static inline uint64_t zigzag(uint64_t delta, unsigned unit_log2)
{
    int64_t units = (int64_t)delta >> unit_log2;
    return ((uint64_t)units << 1) ^ (uint64_t)(units >> 63);
}

struct call {
    uint64_t time_ns, size, in, out;
    uint8_t op, align_log2;
};

/* Encode the call at p as the record after `last` (include/fitalloc-trace.h), which then
 * becomes this record's position; the end of the record. */
static FA_TRACE_INLINE uint8_t *encode(uint8_t *p, struct fa_trace_position *last,
                                       const struct call *c)
{
    uint8_t *kind = p++;
    unsigned k = c->op;
    uint64_t d = c->time_ns - last->state.time_ns - 1;
    if (d) {
        k |= FA_TRACE_F_TIME;
        p = put_varint(p, d);
    }
    if (c->align_log2) {
        k |= FA_TRACE_F_ALIGN;
        *p++ = c->align_log2;
    }
    if (c->size) {
        k |= FA_TRACE_F_SIZE;
        p = put_varint(p, c->size);
    }
    bool has_in = fa_trace_op_has_in(c->op), has_out = fa_trace_op_has_out(c->op);
    uint64_t from = last->state.pointer;
    uint64_t in_delta = has_in ? c->in - from : 0;
    if (has_in && c->in)
        from = c->in;
    uint64_t out_delta = has_out ? c->out - from : 0;
    if (has_out && c->out)
        from = c->out;
    unsigned unit_log2 = 4;
    if ((in_delta | out_delta) & 15) {
        k |= FA_TRACE_F_BYTES;
        unit_log2 = 0;
    }
    if (has_in)
        p = put_varint(p, zigzag(in_delta, unit_log2));
    if (has_out)
        p = put_varint(p, zigzag(out_delta, unit_log2));
    *kind = (uint8_t)k;
    last->state.time_ns = c->time_ns;
    last->state.pointer = from;
    last->index++;
    return p;
}

#ifdef FA_DEBUG
/* The record at p decodes to the call. */
static void check_encoding(const uint8_t *p, const uint8_t *end, struct fa_trace_state before,
                           const struct call *c)
{
    struct fa_trace_record r;
    const uint8_t *at = p;
    int rc = fa_trace_decode(&before, &at, end, &r);
    if (rc != FA_TRACE_DECODED || at != end || r.time_ns != c->time_ns || r.op != c->op ||
        r.size != c->size || r.align_log2 != c->align_log2 ||
        r.in != (fa_trace_op_has_in(c->op) ? c->in : 0) ||
        r.out != (fa_trace_op_has_out(c->op) ? c->out : 0))
        _fa_fatal("fitalloc: trace: record of op %u does not decode (%d)\n", c->op, rc);
}
#endif

/* A thread's first record, and records after its exit hook: no buffer yet, or none any more. */
static struct fa_trace_buffer *buffer_for(struct fa_trace_thread *t)
{
    if (t->ended)
        return NULL;
    int saved = errno;
    t->buffer = _fa_trace_buffer_take(t->number - 1, &t->last);
    /* The thread-exit hook writes the buffer out (it also serves threads without a heap). */
    if (t->buffer)
        _fa_thread_watch_exit();
    errno = saved;
    return t->buffer;
}

/* Without a buffer: the record is a block of its own, written at once. */
static FA_COLD void record_alone(struct fa_trace_thread *t, const struct call *c)
{
    uint8_t block[FA_TRACE_BLOCK_ROOM + FA_TRACE_RECORD_MAX];
    struct fa_trace_position before = t->last;
    uint8_t *end = encode(block + FA_TRACE_BLOCK_ROOM, &t->last, c);
    uint32_t bytes = (uint32_t)(end - (block + FA_TRACE_BLOCK_ROOM));
    _fa_trace_file_write(block, _fa_trace_block_seal(block, t->number - 1, 1, bytes, &before));
}

void _fa_trace_record(uint8_t op, uint64_t size, size_t alignment, const void *in, const void *out)
{
    struct fa_trace_thread *t = &self;
    if (fa_unlikely(!t->number))
        t->number = fa_atomic_add_relaxed(&threads_seen, 1);
    /* Only the pointers the record holds order the call. */
    uint64_t in_address = fa_trace_op_has_in(op) ? (uintptr_t)in : 0;
    uint64_t out_address = fa_trace_op_has_out(op) ? (uintptr_t)out : 0;
    struct call c = {time_of_call(t, in_address, out_address),
                     size,
                     (uintptr_t)in,
                     (uintptr_t)out,
                     op,
                     log2_ceil(alignment)};
    struct fa_trace_buffer *buffer = t->buffer;
    if (fa_unlikely(buffer == NULL) && (buffer = buffer_for(t)) == NULL) {
        record_alone(t, &c);
        return;
    }
    bool emptied = false;
    uint8_t *p = fa_trace_buffer_room(buffer, &t->last, &emptied);
    if (fa_unlikely(emptied))
        t->clock.until_reading = 0; /* the write took time: the next call reads the clock */
#ifdef FA_DEBUG
    struct fa_trace_state before = t->last.state;
#endif
    uint8_t *end = encode(p, &t->last, &c);
#ifdef FA_DEBUG
    check_encoding(p, end, before, &c);
#endif
    fa_trace_buffer_commit(buffer, end);
    if (fa_unlikely(fa_atomic_load_relaxed(&flags.exiting)))
        _fa_trace_buffer_flush(buffer, &t->last);
}

void _fa_trace_leave(void)
{
    self.busy = false;
    self.timed = false;
}

static uint8_t free_op(const char *caller)
{
    /* The callers' names of override/operator_new.c; every other one is a free. */
    if (caller[0] != 'o')
        return FA_TRACE_FREE;
    if (!strcmp(caller, "operator delete"))
        return FA_TRACE_DELETE;
    return !strcmp(caller, "operator delete[]") ? FA_TRACE_DELETE_ARRAY : FA_TRACE_FREE;
}

/* One made inside a traced call (realloc's) is not recorded: that call takes its place in the
 * order here, before the old block is given back. */
bool _fa_trace_free_begin(const void *p, const char *caller, size_t size)
{
    if (!_fa_trace_enter()) {
        _fa_trace_point();
        return false;
    }
    _fa_trace_record(free_op(caller), size, 0, p, NULL);
    return true;
}

void _fa_trace_thread_exit(void)
{
    if (self.buffer) {
        _fa_trace_buffer_give_back(self.buffer, &self.last);
        self.buffer = NULL;
    }
    self.ended = true;
}

void _fa_trace_process_exit(void)
{
    if (!_fa_tracing)
        return;
    /* First the flag, then the buffers: a thread that records after its buffer was written
     * sees the flag and writes its records itself. */
    fa_atomic_store_seq_cst(&flags.exiting, true);
    _fa_trace_buffers_flush_all(0);
}

void _fa_trace_fork_child(void)
{
    if (!_fa_tracing)
        return;
    /* The child's file numbers its records from 0; its first call reads the clock, so that it
     * comes after every call the parent made before the fork. */
    self.last.index = 0;
    self.clock.until_reading = 0;
    _fa_trace_buffers_after_fork(self.buffer, &self.last);
    fa_atomic_store_relaxed(&flags.exiting, false);
    _fa_trace_file_fork_child();
}

void _fa_trace_fatal(void)
{
    if (_fa_tracing)
        _fa_trace_buffers_flush_all(1000);
}

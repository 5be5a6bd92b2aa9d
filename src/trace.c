/* FITALLOC_TRACE=path: a record of every allocation call the program makes (docs/trace.md;
 * the format is include/fitalloc-trace.h).
 *
 * While tracing, every page is slow (types.h: never in a direct slot, FA_OWNER_SLOW in its
 * owner word), so every malloc and free leaves the inline fast paths, which stay exactly as
 * they are, and reaches the out-of-line paths that record. Each entry point the program can
 * call records its own call: _fa_trace_enter, the call, _fa_trace_record, _fa_trace_leave. The
 * calls it makes inside (calloc's malloc, realloc's malloc and free, operator new's) find the
 * thread already in a traced call and are not recorded: one record per call of the program.
 *
 * Order: one counter for the process (one relaxed atomic add a call). An allocation takes its
 * number once its block exists and a free before its block is given back, so a block freed by
 * one thread and handed out to another is freed first in the order. A realloc that moves takes
 * its number between its new block and the free of the old one (_fa_trace_point).
 */
#include <errno.h>
#include <string.h>

#include "options.h"
#include "trace.h"

/* True until the start decides: an entry point called before the process has started asks
 * _fa_trace_enter, which starts it, so that even the first call is recorded as what it is. */
bool _fa_trace_on = true;
bool _fa_tracing;
static bool decided;
static uint64_t start_ns;
static uint64_t next_seq;
static uint32_t threads_seen;
/* The process is exiting: every buffer has been written once; records go out one by one. */
static bool exiting;

struct fa_trace_thread {
    struct fa_trace_buffer *buffer;
    uint64_t seq;     /* the current call's number, once `numbered` */
    uint64_t time_ns; /* and when it was taken (since start_ns) */
    uint32_t number;  /* this thread's number + 1 (0: no event yet) */
    bool busy;        /* in a traced call: the calls made inside it are not recorded */
    bool numbered;
    bool ended; /* past the thread-exit hook: records go straight to the file */
};
static __thread struct fa_trace_thread self __attribute__((tls_model("initial-exec")));

bool _fa_trace_start(void)
{
    if (decided)
        return _fa_tracing;
    const char *path = fa_option_str(trace);
    if (path) {
        start_ns = _fa_os_now_ns();
        _fa_tracing = _fa_trace_file_open(path, start_ns, _fa_lab_active ? 1 : 0);
    }
    _fa_trace_on = _fa_tracing;
    __atomic_store_n(&decided, true, __ATOMIC_RELEASE);
    return _fa_tracing;
}

bool _fa_trace_enter(void)
{
    if (fa_unlikely(!__atomic_load_n(&decided, __ATOMIC_ACQUIRE)))
        _fa_process_init(); /* the first call of the process: tracing is decided at its start */
    if (!_fa_tracing || self.busy)
        return false;
    self.busy = true;
    self.numbered = false;
    return true;
}

static void take_number(struct fa_trace_thread *t)
{
    t->time_ns = _fa_os_now_ns() - start_ns;
    t->seq = __atomic_fetch_add(&next_seq, 1, __ATOMIC_RELAXED);
    t->numbered = true;
}

void _fa_trace_point(void)
{
    if (_fa_tracing && self.busy && !self.numbered)
        take_number(&self);
}

static uint8_t log2_ceil(size_t x)
{
    return x > 1 ? (uint8_t)(64 - __builtin_clzll((unsigned long long)x - 1)) : 0;
}

/* fa_trace_check of a record with these fields, without reading it back byte by byte: the xor
 * of all its bytes is the xor of its fields' bytes in any order, so the fields are xor-ed into
 * one word first and its 8 bytes folded at the end. */
static uint8_t check_byte(uint64_t fields)
{
    fields ^= fields >> 32;
    fields ^= fields >> 16;
    fields ^= fields >> 8;
    return (uint8_t)(fields ^ FA_TRACE_CHECK_SEED);
}

/* A thread's first record, and records after its exit hook: no buffer yet, or none any more. */
static struct fa_trace_buffer *buffer_for(struct fa_trace_thread *t)
{
    if (t->ended)
        return NULL;
    int saved = errno;
    t->buffer = _fa_trace_buffer_take();
    /* The thread-exit hook writes the buffer out (it also serves threads without a heap). */
    if (t->buffer)
        _fa_heap_watch_thread_exit();
    errno = saved;
    return t->buffer;
}

void _fa_trace_record(uint8_t op, uint64_t size, size_t alignment, const void *in, const void *out)
{
    struct fa_trace_thread *t = &self;
    if (!t->numbered)
        take_number(t);
    if (fa_unlikely(!t->number))
        t->number = __atomic_add_fetch(&threads_seen, 1, __ATOMIC_RELAXED);
    uint8_t align_log2 = log2_ceil(alignment);
    struct fa_trace_record record, *r = &record;
    struct fa_trace_buffer *buffer = t->buffer;
    if (fa_likely(buffer != NULL) || (buffer = buffer_for(t)) != NULL)
        r = fa_trace_buffer_slot(buffer);
    r->seq = t->seq;
    r->time_ns = t->time_ns;
    r->size = size;
    r->in = (uintptr_t)in;
    r->out = (uintptr_t)out;
    r->thread = t->number - 1;
    r->op = op;
    r->align_log2 = align_log2;
    r->flags = 0;
    r->check = check_byte(t->seq ^ t->time_ns ^ size ^ (uintptr_t)in ^ (uintptr_t)out ^
                          (t->number - 1) ^ op ^ ((uint64_t)align_log2 << 8));
#ifdef FA_DEBUG
    if (r->check != fa_trace_check(r))
        _fa_fatal("fitalloc: trace: check byte %u, expected %u\n", r->check, fa_trace_check(r));
#endif
    if (fa_unlikely(!buffer)) {
        _fa_trace_file_write(r, sizeof *r);
        return;
    }
    fa_trace_buffer_commit(buffer);
    if (fa_unlikely(__atomic_load_n(&exiting, __ATOMIC_RELAXED)))
        _fa_trace_buffer_flush(buffer);
}

void _fa_trace_leave(void)
{
    self.busy = false;
    self.numbered = false;
}

void _fa_trace_resume(void)
{
    self.busy = true;
}

uint8_t _fa_trace_free_op(const char *caller)
{
    /* The callers' names of override_new.c; every other one is a free. */
    if (caller[0] != 'o')
        return FA_TRACE_FREE;
    if (!strcmp(caller, "operator delete"))
        return FA_TRACE_DELETE;
    return !strcmp(caller, "operator delete[]") ? FA_TRACE_DELETE_ARRAY : FA_TRACE_FREE;
}

void _fa_trace_thread_exit(void)
{
    if (self.buffer) {
        _fa_trace_buffer_give_back(self.buffer);
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
    __atomic_store_n(&exiting, true, __ATOMIC_SEQ_CST);
    _fa_trace_buffers_flush_all(0);
}

void _fa_trace_fork_child(void)
{
    if (!_fa_tracing)
        return;
    _fa_trace_buffers_after_fork(self.buffer);
    __atomic_store_n(&exiting, false, __ATOMIC_RELAXED);
    _fa_trace_file_fork_child();
}

void _fa_trace_fatal(void)
{
    if (_fa_tracing)
        _fa_trace_buffers_flush_all(1000);
}

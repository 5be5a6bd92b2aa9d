/* FITALLOC_TRACE's file: which path, its header, the writes, a fork child's own file.
 *
 * The file is created (or truncated) once at start and opened O_APPEND, and every write is of
 * whole blocks: a write to a regular file is not interleaved with another one on Linux, so
 * the blocks of several threads never mix. Nothing here allocates: the path
 * is copied into a static buffer (environ may change later), numbers are printed by hand.
 */
#include <errno.h>
#include <string.h>

#include "common/options.h"
#include "trace/trace.h"
#include "platform/atomic.h"

#define FA_TRACE_PATH_MAX 4096

static char path[FA_TRACE_PATH_MAX] FA_BSS_APART;
static int fd = -1;
static uint32_t writer_pid; /* the process that writes the file */
static uint64_t start_ns;
static uint32_t mode;
static bool write_failed;

/* path.PID into out (FA_TRACE_PATH_MAX bytes; the path is shorter by 16 at least). */
static void path_with_pid(char *out, uint32_t pid)
{
    size_t len = strlen(path);
    memcpy(out, path, len);
    char digits[16], *d = digits + sizeof digits;
    do
        *--d = (char)('0' + pid % 10);
    while ((pid /= 10) != 0);
    out[len] = '.';
    size_t n = (size_t)(digits + sizeof digits - d);
    memcpy(out + len + 1, d, n);
    out[len + 1 + n] = 0;
}

static int write_header(int to, uint32_t parent_pid)
{
    struct fa_trace_header h = fa_trace_header_start();
    h.clock_period = FA_TRACE_CLOCK_PERIOD;
    h.pid = writer_pid;
    h.parent_pid = parent_pid;
    h.mode = mode;
    h.start_ns = start_ns;
    return _fa_os_write(to, &h, sizeof h);
}

/* Create `name` with its header: the descriptor, or -1 after a warning. */
static int create(const char *name, uint32_t parent_pid)
{
    int created = _fa_os_create_append(name);
    int error = created < 0 ? -created : write_header(created, parent_pid);
    if (!error)
        return created;
    if (created >= 0)
        _fa_os_close(created);
    _fa_message(2, "fitalloc: warning: FITALLOC_TRACE: cannot write %s (%s); not tracing\n", name,
                _fa_os_error_text(error));
    return -1;
}

/* A program started by exec from a traced one inherits FITALLOC_TRACE: if the file there is
 * the trace of another process still running (the one that started it, a shell...), this one
 * writes path.PID instead of truncating it. A trace left by a process that has ended, or by
 * this very process before it called exec (a wrapper such as env or nice), is replaced. */
static bool taken_by_running_process(void)
{
    struct fa_trace_header h;
    return _fa_os_read_head(path, &h, sizeof h) &&
           !memcmp(h.magic, FA_TRACE_MAGIC, sizeof h.magic) && h.pid != 0 && h.pid != writer_pid &&
           _fa_os_process_alive((int)h.pid);
}

bool _fa_trace_file_open(const char *option, uint64_t start, uint32_t trace_mode)
{
    size_t len = strlen(option);
    if (len + 16 >= sizeof path) {
        _fa_message(2,
                    "fitalloc: warning: FITALLOC_TRACE: the path is longer than %d bytes; "
                    "not tracing\n",
                    FA_TRACE_PATH_MAX - 16);
        return false;
    }
    memcpy(path, option, len + 1);
    writer_pid = (uint32_t)_fa_os_pid();
    start_ns = start;
    mode = trace_mode;
    if (taken_by_running_process()) {
        char own[FA_TRACE_PATH_MAX];
        path_with_pid(own, writer_pid);
        if (fa_option(verbose))
            _fa_message(2,
                        "fitalloc: FITALLOC_TRACE: %s belongs to a running process: tracing "
                        "to %s\n",
                        path, own);
        fd = create(own, (uint32_t)_fa_os_parent_pid());
    } else {
        fd = create(path, 0);
    }
    return fd >= 0;
}

void _fa_trace_file_write(const void *blocks, size_t bytes)
{
    int to = fa_atomic_load_relaxed(&fd);
    if (to < 0)
        return;
    int error = _fa_os_write(to, blocks, bytes);
    if (!error)
        return;
    /* A short write may have cut a block: anything appended after it would be read askew. */
    fa_atomic_store_relaxed(&fd, -1);
    if (!fa_atomic_exchange_relaxed(&write_failed, true))
        _fa_message(2,
                    "fitalloc: warning: FITALLOC_TRACE: writing the trace failed (%s); "
                    "it stops here\n",
                    _fa_os_error_text(error));
}

void _fa_trace_file_fork_child(void)
{
    int parent_fd = fd;
    uint32_t parent_pid = writer_pid;
    writer_pid = (uint32_t)_fa_os_pid();
    write_failed = false;
    char own[FA_TRACE_PATH_MAX];
    path_with_pid(own, writer_pid);
    fd = create(own, parent_pid);
    if (parent_fd >= 0)
        _fa_os_close(parent_fd); /* the parent's file is the parent's to write */
}

/* Helpers of the fitalloc-replay tests: build a trace record by record, write it in the format
 * of include/fitalloc-trace.h (encoded here, so the tests do not depend on the recorder) in any
 * record order, or damaged on purpose, run the fitalloc-replay of this build on it and read
 * what it printed. Header-only: every test is its own program.
 */
#ifndef FA_TESTS_REPLAY_TEST_H
#define FA_TESTS_REPLAY_TEST_H

#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "fitalloc-trace.h"

/* No 1 s sleep at the test's exit (the runs of fitalloc-replay are told the same). */
FA_TEST_TSAN_OPTIONS("atexit_sleep_ms=0")

/* ---- building a trace ---- */

struct trace_builder {
    struct fa_trace_record *records;
    size_t count, capacity;
};

static inline struct fa_trace_record *tb_add(struct trace_builder *tb, unsigned op, uint64_t size,
                                             uint64_t in, uint64_t out)
{
    if (tb->count == tb->capacity) {
        tb->capacity = tb->capacity ? tb->capacity * 2 : 64;
        tb->records = realloc(tb->records, tb->capacity * sizeof *tb->records);
        CHECK(tb->records != NULL);
    }
    struct fa_trace_record *r = &tb->records[tb->count];
    memset(r, 0, sizeof *r);
    r->seq = tb->count; /* in the order built; the reader numbers records by time and thread */
    r->time_ns = tb->count * 100;
    r->op = (uint8_t)op;
    r->size = size;
    r->in = in;
    r->out = out;
    tb->count++;
    return r;
}

static inline void tb_malloc(struct trace_builder *tb, uint64_t size, uint64_t out)
{
    tb_add(tb, FA_TRACE_MALLOC, size, 0, out);
}

static inline void tb_free(struct trace_builder *tb, uint64_t in)
{
    tb_add(tb, FA_TRACE_FREE, 0, in, 0);
}

/* A copy of tb's records, with room for `extra` more. */
static inline struct trace_builder tb_copy(const struct trace_builder *tb, size_t extra)
{
    struct trace_builder c = {malloc((tb->count + extra) * sizeof *tb->records), tb->count,
                              tb->count + extra};
    CHECK(c.records != NULL);
    memcpy(c.records, tb->records, tb->count * sizeof *tb->records);
    return c;
}

static inline void tb_release(struct trace_builder *tb)
{
    free(tb->records);
    memset(tb, 0, sizeof *tb);
}

/* ---- writing it ---- */

static inline struct fa_trace_header trace_header(void)
{
    struct fa_trace_header h = fa_trace_header_start();
    h.pid = 4242;
    h.clock_period = 1;
    return h;
}

/* Where write_trace_as put things: the offset of each record (in the order written) and of
 * each block, and the file's size. */
#define LAYOUT_MAX 64
struct trace_layout {
    size_t record_at[LAYOUT_MAX], records;
    size_t block_at[LAYOUT_MAX], blocks;
    size_t size;
};

static inline uint8_t *tb_varint(uint8_t *p, uint64_t v)
{
    for (; v >= 0x80; v >>= 7)
        *p++ = (uint8_t)(0x80 | (v & 0x7f));
    *p++ = (uint8_t)v;
    return p;
}

/* One record at p, as deltas from *s (the format's rules, written out plainly); its end. */
static inline uint8_t *tb_encode(uint8_t *p, struct fa_trace_state *s,
                                 const struct fa_trace_record *r)
{
    bool has_in = fa_trace_op_has_in(r->op), has_out = fa_trace_op_has_out(r->op);
    CHECK_MSG((has_in || !r->in) && (has_out || !r->out), "op %u cannot carry its pointers", r->op);
    uint64_t base = s->pointer;
    uint64_t in_delta = r->in - base;
    if (has_in && r->in)
        base = r->in;
    uint64_t out_delta = r->out - base;
    if (has_out && r->out)
        base = r->out;
    bool bytes = ((has_in ? in_delta : 0) | (has_out ? out_delta : 0)) % 16 != 0;
    uint8_t kind = r->op;
    uint8_t *k = p++;
    if (r->time_ns != s->time_ns + 1) {
        kind |= FA_TRACE_F_TIME;
        p = tb_varint(p, r->time_ns - s->time_ns - 1);
    }
    if (r->align_log2) {
        kind |= FA_TRACE_F_ALIGN;
        *p++ = r->align_log2;
    }
    if (r->size) {
        kind |= FA_TRACE_F_SIZE;
        p = tb_varint(p, r->size);
    }
    if (bytes)
        kind |= FA_TRACE_F_BYTES;
    uint64_t deltas[2] = {in_delta, out_delta};
    bool present[2] = {has_in, has_out};
    for (int i = 0; i < 2; i++) {
        if (!present[i])
            continue;
        int64_t units = bytes ? (int64_t)deltas[i] : (int64_t)deltas[i] / 16;
        p = tb_varint(p, ((uint64_t)units << 1) ^ (uint64_t)(units >> 63));
    }
    *k = kind;
    *s = (struct fa_trace_state){r->time_ns, base};
    return p;
}

/* Records per block at most, as a small buffer of the recorder would hold. */
#define TB_BLOCK_RECORDS 64

/* Write the header and the records in the order of `order` (NULL: as they are), a block for
 * each run of up to TB_BLOCK_RECORDS records of one thread, numbered per thread in the order
 * written (a record's seq is not in the file: the reader numbers the records by time and
 * thread); where things went into *layout (NULL: nowhere). */
static inline void write_trace_as(const char *path, const struct fa_trace_header *h,
                                  const struct fa_trace_record *records, size_t n,
                                  const size_t *order, struct trace_layout *layout)
{
    FILE *f = fopen(path, "wb");
    CHECK_MSG(f != NULL, "cannot write %s", path);
    CHECK(fwrite(h, sizeof *h, 1, f) == 1);
    size_t at = sizeof *h;
    if (layout)
        memset(layout, 0, sizeof *layout);
    static uint8_t bytes[TB_BLOCK_RECORDS * FA_TRACE_RECORD_MAX];
    struct fa_trace_state last[64] = {{0, 0}};
    uint64_t written[64] = {0};
    for (size_t i = 0; i < n;) {
        uint32_t thread = records[order ? order[i] : i].thread;
        CHECK(thread < 64);
        struct fa_trace_state before = last[thread];
        uint8_t *p = bytes;
        uint32_t count = 0;
        for (; i < n && count < TB_BLOCK_RECORDS; i++, count++) {
            const struct fa_trace_record *r = &records[order ? order[i] : i];
            if (r->thread != thread)
                break;
            if (layout && layout->records < LAYOUT_MAX)
                layout->record_at[layout->records++] =
                    at + sizeof(struct fa_trace_block) + (size_t)(p - bytes);
            p = tb_encode(p, &last[thread], r);
        }
        struct fa_trace_block b = {
            FA_TRACE_BLOCK_TAG, thread,         count,          (uint32_t)(p - bytes),
            written[thread],    before.time_ns, before.pointer, 0};
        b.checksum = fa_trace_block_checksum(&b, bytes);
        written[thread] += count;
        if (layout && layout->blocks < LAYOUT_MAX)
            layout->block_at[layout->blocks++] = at;
        CHECK(fwrite(&b, sizeof b, 1, f) == 1);
        CHECK(fwrite(bytes, 1, b.bytes, f) == b.bytes);
        at += sizeof b + b.bytes;
    }
    CHECK(fclose(f) == 0);
    if (layout)
        layout->size = at;
}

static inline void write_trace(const char *path, const struct trace_builder *tb)
{
    struct fa_trace_header h = trace_header();
    write_trace_as(path, &h, tb->records, tb->count, NULL, NULL);
}

/* ---- damaging it ---- */

/* The file cut to its first `size` bytes. */
static inline void cut_file(const char *path, size_t size)
{
    CHECK_MSG(truncate(path, (off_t)size) == 0, "cannot cut %s", path);
}

/* Byte `at` of the file set to `value`; with fix_block, the checksum of the block at that
 * offset is then made right again (damage only the reader's other checks can see). */
static inline void patch_file(const char *path, size_t at, uint8_t value, bool fix_block,
                              size_t block_at)
{
    FILE *f = fopen(path, "r+b");
    CHECK_MSG(f != NULL, "cannot open %s", path);
    CHECK(fseek(f, (long)at, SEEK_SET) == 0 && fputc(value, f) == value);
    if (fix_block) {
        struct fa_trace_block b;
        CHECK(fseek(f, (long)block_at, SEEK_SET) == 0 && fread(&b, sizeof b, 1, f) == 1);
        uint8_t *data = malloc(b.bytes ? b.bytes : 1);
        CHECK(data != NULL && fread(data, 1, b.bytes, f) == b.bytes);
        b.checksum = fa_trace_block_checksum(&b, data);
        free(data);
        CHECK(fseek(f, (long)block_at, SEEK_SET) == 0 && fwrite(&b, sizeof b, 1, f) == 1);
    }
    CHECK(fclose(f) == 0);
}

/* The 32-bit field at `field` of the block header at block_at set to value (the low half of a
 * 64-bit one), its checksum made right. */
static inline void patch_block_u32(const char *path, size_t block_at, size_t field, uint32_t value)
{
    for (size_t i = 0; i < 4; i++)
        patch_file(path, block_at + field + i, (uint8_t)(value >> (8 * i)), i == 3, block_at);
}

/* ---- running fitalloc-replay ---- */

struct run_result {
    int status; /* exit status, or 128 + signal */
    char *out, *err;
};

static inline char *read_whole_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    CHECK_MSG(f != NULL, "cannot read %s", path);
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    CHECK(buf != NULL);
    size_t n;
    while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (len + 1 == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            CHECK(buf != NULL);
        }
    }
    fclose(f);
    buf[len] = 0;
    return buf;
}

static inline const char *replay_binary(void)
{
    static char path[4096];
    const char *dir = getenv("FITALLOC_BUILD_DIR");
    CHECK_MSG(dir != NULL, "FITALLOC_BUILD_DIR is not set (run the test through ctest)");
    snprintf(path, sizeof path, "%s/fitalloc-replay", dir);
    CHECK_MSG(access(path, X_OK) == 0, "%s is missing", path);
    return path;
}

/* Run fitalloc-replay with the arguments (NULL-terminated); its output files are named after
 * `tag` in the working directory. */
static inline struct run_result run_replay_argv(const char *tag, char *const *args)
{
    char out_path[256], err_path[256];
    snprintf(out_path, sizeof out_path, "%s.stdout", tag);
    snprintf(err_path, sizeof err_path, "%s.stderr", tag);
    const char *binary = replay_binary();
    char *argv[64];
    size_t argc = 0;
    argv[argc++] = (char *)binary;
    for (; *args; args++) {
        CHECK(argc < 63);
        argv[argc++] = *args;
    }
    argv[argc] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (out < 0 || err < 0)
            _exit(126);
        dup2(out, 1);
        dup2(err, 2);
#if FA_TEST_TSAN
        /* ThreadSanitizer sleeps a second at exit by default: not in every run of a test. */
        static char tsan[1024];
        const char *given = getenv("TSAN_OPTIONS");
        snprintf(tsan, sizeof tsan, "%s%satexit_sleep_ms=0", given ? given : "",
                 given && *given ? ":" : "");
        setenv("TSAN_OPTIONS", tsan, 1);
#endif
        execv(binary, argv);
        _exit(127);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    struct run_result r;
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = read_whole_file(out_path);
    r.err = read_whole_file(err_path);
    return r;
}

/* run_replay(tag, "trace", "--csv", ...) */
#define run_replay(tag, ...) run_replay_argv(tag, (char *const[]){__VA_ARGS__, NULL})

static inline void run_result_release(struct run_result *r)
{
    free(r->out);
    free(r->err);
}

/* Exit status and a substring of stderr, with both outputs shown when it is not so. */
#define CHECK_RUN(r, want_status, want_err)                                                        \
    CHECK_MSG((r).status == (want_status) && strstr((r).err, (want_err)) != NULL,                  \
              "exit %d (want %d), want \"%s\" in stderr\n--- stdout:\n%s--- stderr:\n%s",          \
              (r).status, (want_status), (want_err), (r).out, (r).err)

/* ---- reading CSV output ---- */

/* Field `name` of the row whose first column is `config`, from CSV text with a header line;
 * copied into value (at most 63 characters). false if there is no such row or column. */
static inline bool csv_field(const char *csv, const char *config, const char *name, char *value)
{
    const char *header_end = strchr(csv, '\n');
    CHECK(header_end != NULL);
    int column = -1, i = 0;
    for (const char *p = csv; p < header_end; i++) {
        size_t len = strcspn(p, ",\n");
        if (strlen(name) == len && !strncmp(p, name, len))
            column = i;
        p += len + 1;
    }
    if (column < 0)
        return false;
    for (const char *line = header_end + 1; *line; line = strchr(line, '\n') + 1) {
        size_t len = strcspn(line, ",\n");
        if (strlen(config) == len && !strncmp(line, config, len)) {
            const char *p = line;
            for (int c = 0; c < column; c++)
                p += strcspn(p, ",\n") + 1;
            size_t n = strcspn(p, ",\n");
            CHECK(n < 64);
            memcpy(value, p, n);
            value[n] = 0;
            return true;
        }
        if (!strchr(line, '\n'))
            break;
    }
    return false;
}

static inline unsigned long long csv_u64(const char *csv, const char *config, const char *name)
{
    char value[64];
    CHECK_MSG(csv_field(csv, config, name, value), "no %s of %s in:\n%s", name, config, csv);
    char *end;
    unsigned long long v = strtoull(value, &end, 10);
    CHECK_MSG(*value && !*end, "%s of %s is \"%s\"", name, config, value);
    return v;
}

static inline double csv_double(const char *csv, const char *config, const char *name)
{
    char value[64];
    CHECK_MSG(csv_field(csv, config, name, value), "no %s of %s in:\n%s", name, config, csv);
    char *end;
    double v = strtod(value, &end);
    CHECK_MSG(*value && !*end, "%s of %s is \"%s\"", name, config, value);
    return v;
}

#define CHECK_NEAR(a, b, eps)                                                                      \
    CHECK_MSG(((a) - (b)) < (eps) && ((b) - (a)) < (eps), "%s = %.6f, expected %.6f", #a,          \
              (double)(a), (double)(b))

#endif

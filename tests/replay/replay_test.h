/* Helpers of the fitalloc-replay tests: build a trace record by record (include/fitalloc-trace.h,
 * check bytes computed here, so the tests do not depend on the recorder), write it in any
 * record order or damaged on purpose, run the fitalloc-replay of this build on it and read
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

#if FA_TEST_TSAN
/* No 1 s sleep at the test's exit (the runs of fitalloc-replay are told the same). */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
    return "atexit_sleep_ms=0";
}
#endif

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
    r->seq = tb->count;
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

static inline void tb_release(struct trace_builder *tb)
{
    free(tb->records);
    memset(tb, 0, sizeof *tb);
}

/* ---- writing it ---- */

static inline struct fa_trace_header trace_header(void)
{
    struct fa_trace_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, FA_TRACE_MAGIC, sizeof h.magic);
    h.version = FA_TRACE_VERSION;
    h.header_size = sizeof h;
    h.record_size = sizeof(struct fa_trace_record);
    h.pid = 4242;
    return h;
}

/* Write the header and the records in the order of `order` (NULL: as they are), each with its
 * check byte, then `tail` extra bytes of garbage (a partial record). */
static inline void write_trace_as(const char *path, const struct fa_trace_header *h,
                                  const struct fa_trace_record *records, size_t n,
                                  const size_t *order, size_t tail)
{
    FILE *f = fopen(path, "wb");
    CHECK_MSG(f != NULL, "cannot write %s", path);
    CHECK(fwrite(h, sizeof *h, 1, f) == 1);
    for (size_t i = 0; i < n; i++) {
        struct fa_trace_record r = records[order ? order[i] : i];
        r.check = fa_trace_check(&r);
        CHECK(fwrite(&r, sizeof r, 1, f) == 1);
    }
    for (size_t i = 0; i < tail; i++)
        fputc(0x5a, f);
    CHECK(fclose(f) == 0);
}

static inline void write_trace(const char *path, const struct trace_builder *tb)
{
    struct fa_trace_header h = trace_header();
    write_trace_as(path, &h, tb->records, tb->count, NULL, 0);
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

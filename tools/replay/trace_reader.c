/* The validating trace reader (trace_reader.h). The file is read into one anonymous mapping;
 * a first pass over its blocks checks their framing and checksums and counts the records, a
 * second decodes them into an array of their own, which is then put into program order in
 * place. */
#include "trace_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "program_order.h"
#include "replay_mem.h"

/* Record indexes are 32-bit (the order array): more records than this are refused. */
#define MAX_RECORDS ((size_t)UINT32_MAX - 1)
/* A header_size above this is a corrupt field, not a future format. */
#define MAX_HEADER_SIZE ((uint32_t)1 << 20)
/* Thread numbers above this are a corrupt field (the reader keeps an entry per thread). */
#define MAX_THREADS ((uint32_t)1 << 24)

static const char *const op_names[FA_TRACE_OP_MAX + 1] = {
    "?", "malloc", "calloc", "realloc", "aligned", "free", "new", "new[]", "delete", "delete[]",
};

const char *trace_op_name(unsigned op)
{
    return op <= FA_TRACE_OP_MAX ? op_names[op] : "?";
}

__attribute__((format(printf, 3, 4))) static int bad_field(const struct trace *t, uint64_t offset,
                                                           const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fitalloc-replay: %s: byte %llu: ", t->path, (unsigned long long)offset);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return -1;
}

/* The whole file in one mapping (*mapped bytes of it, *size used); -1 (message printed) if it
 * cannot be read. */
static int read_file(struct trace *t, void **mapping, size_t *mapped, size_t *size)
{
    int fd = open(t->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "fitalloc-replay: %s: cannot open: %s\n", t->path, strerror(errno));
        return -1;
    }
    struct stat st;
    size_t capacity = (size_t)1 << 20;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size + 1 > capacity)
        capacity = (size_t)st.st_size + 1; /* +1: reaching end of file needs no second pass */
    char *buf = replay_map(capacity);
    size_t used = 0;
    for (;;) {
        if (!buf) {
            fprintf(stderr, "fitalloc-replay: %s: out of memory reading the file\n", t->path);
            close(fd);
            return -1;
        }
        if (used == capacity) {
            char *bigger = replay_remap(buf, capacity, capacity * 2);
            if (!bigger)
                replay_unmap(buf, capacity);
            buf = bigger;
            capacity *= 2;
            continue;
        }
        ssize_t n = read(fd, buf + used, capacity - used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            fprintf(stderr, "fitalloc-replay: %s: cannot read: %s\n", t->path, strerror(errno));
            replay_unmap(buf, capacity);
            close(fd);
            return -1;
        }
        if (n == 0)
            break;
        used += (size_t)n;
    }
    close(fd);
    *mapping = buf;
    *mapped = capacity;
    *size = used;
    return 0;
}

static int check_header(struct trace *t, const uint8_t *file, size_t size)
{
    const struct fa_trace_header *h = (const struct fa_trace_header *)file;
    /* Each field in turn: a short file is reported at the first field it cuts. */
    if (size < sizeof h->magic || memcmp(h->magic, FA_TRACE_MAGIC, sizeof h->magic) != 0)
        return bad_field(t, 0, "not a fitalloc trace (bad magic; expected \"%s\")", FA_TRACE_MAGIC);
    if (size < offsetof(struct fa_trace_header, header_size))
        return bad_field(t, size, "the file ends inside the header (version)");
    if (h->version != FA_TRACE_VERSION) {
        if (h->version == __builtin_bswap32(FA_TRACE_VERSION))
            return bad_field(t, offsetof(struct fa_trace_header, version),
                             "written on a machine of the other byte order");
        return bad_field(t, offsetof(struct fa_trace_header, version),
                         "version %u, this reader knows version %u", h->version, FA_TRACE_VERSION);
    }
    if (size < offsetof(struct fa_trace_header, block_header_size))
        return bad_field(t, size, "the file ends inside the header (header_size)");
    if (h->header_size < sizeof *h || h->header_size > MAX_HEADER_SIZE || h->header_size % 8)
        return bad_field(t, offsetof(struct fa_trace_header, header_size),
                         "bad header_size %u (expected %zu)", h->header_size, sizeof *h);
    if (size < offsetof(struct fa_trace_header, pid))
        return bad_field(t, size, "the file ends inside the header (block_header_size)");
    if (h->block_header_size != sizeof(struct fa_trace_block))
        return bad_field(t, offsetof(struct fa_trace_header, block_header_size),
                         "bad block_header_size %u (expected %zu)", h->block_header_size,
                         sizeof(struct fa_trace_block));
    if (size < h->header_size)
        return bad_field(t, size, "the file ends inside the header (%u bytes)", h->header_size);
    memcpy(&t->header, h, sizeof t->header);
    return 0;
}

/* The smallest record: its kind and one pointer field. */
#define MIN_RECORD_BYTES 2

/* The file as the passes over its blocks see it. */
struct layout {
    const uint8_t *file;
    size_t size;
    size_t records;   /* at most this many records (the last block may be cut short) */
    uint32_t threads; /* the highest thread number of a block + 1 */
};

/* Every complete block: its tag, its record count against its length, its checksum. */
static int scan_blocks(struct trace *t, struct layout *l)
{
    size_t at = t->header.header_size;
    for (size_t k = 0; at < l->size; k++) {
        if (l->size - at < sizeof(struct fa_trace_block))
            break; /* cut short inside a block header: decode_blocks warns */
        struct fa_trace_block b;
        memcpy(&b, l->file + at, sizeof b);
        if (b.tag != FA_TRACE_BLOCK_TAG)
            return bad_field(t, at, "block %zu has a bad tag 0x%08x (expected 0x%08x)", k, b.tag,
                             FA_TRACE_BLOCK_TAG);
        if (b.thread >= MAX_THREADS)
            return bad_field(t, at + offsetof(struct fa_trace_block, thread),
                             "block %zu has a bad thread number %u", k, b.thread);
        if (b.thread >= l->threads)
            l->threads = b.thread + 1;
        if (b.records > b.bytes / MIN_RECORD_BYTES)
            return bad_field(t, at + offsetof(struct fa_trace_block, records),
                             "block %zu: %u records cannot fit in %u bytes", k, b.records, b.bytes);
        size_t left = l->size - at - sizeof b;
        bool cut = b.bytes > left;
        /* A block cut short holds what its bytes there can hold, whatever its header says. */
        l->records +=
            cut && b.records > left / MIN_RECORD_BYTES ? left / MIN_RECORD_BYTES : b.records;
        if (l->records > MAX_RECORDS)
            return bad_field(t, at, "more than %zu records", MAX_RECORDS);
        if (cut)
            break; /* nothing to check its records against */
        if (fa_trace_block_checksum(&b, l->file + at + sizeof b) != b.checksum)
            return bad_field(t, at, "block %zu has a bad checksum", k);
        at += sizeof b + b.bytes;
    }
    return 0;
}

static int bad_record(struct trace *t, uint64_t at, size_t index, size_t block, int rc,
                      const uint8_t *record)
{
    switch (rc) {
    case FA_TRACE_BAD_OP:
        return bad_field(t, at, "record %zu has an unknown op %u", index, *record & 15u);
    case FA_TRACE_BAD_VARINT:
        return bad_field(t, at, "record %zu has a number longer than 64 bits", index);
    case FA_TRACE_BAD_ALIGN: return bad_field(t, at, "record %zu has a bad alignment", index);
    default: return bad_field(t, at, "record %zu goes past the end of block %zu", index, block);
    }
}

/* Decode every record into t->records (file order). The records of a block cut short are read
 * up to the last one that is complete, with a warning. `next` (an entry per thread, zeroed):
 * each thread's next record number, for the count of records lost in between. */
static int decode_blocks(struct trace *t, const struct layout *l, uint64_t *next)
{
    size_t at = t->header.header_size, n = 0;
    for (size_t k = 0; at < l->size; k++) {
        if (l->size - at < sizeof(struct fa_trace_block)) {
            fprintf(stderr,
                    "fitalloc-replay: %s: warning: byte %zu: the file ends inside the header of "
                    "block %zu (%zu of %zu bytes): ignored\n",
                    t->path, at, k, l->size - at, sizeof(struct fa_trace_block));
            break;
        }
        struct fa_trace_block b;
        memcpy(&b, l->file + at, sizeof b);
        if (b.index < next[b.thread])
            return bad_field(t, at + offsetof(struct fa_trace_block, index),
                             "block %zu starts at record %llu of thread %u, which has %llu "
                             "records before it",
                             k, (unsigned long long)b.index, b.thread,
                             (unsigned long long)next[b.thread]);
        t->lost += b.index - next[b.thread];
        const uint8_t *p = l->file + at + sizeof b;
        bool cut = b.bytes > l->size - at - sizeof b;
        const uint8_t *end = cut ? l->file + l->size : p + b.bytes;
        struct fa_trace_state state = fa_trace_block_state(&b);
        uint32_t i = 0;
        for (; i < b.records; i++, n++) {
            struct fa_trace_record *r = &t->records[n];
            int rc = fa_trace_decode(&state, &p, end, r);
            if (rc == FA_TRACE_CUT && cut)
                break;
            if (rc != FA_TRACE_DECODED)
                return bad_record(t, (uint64_t)(p - l->file), n, k, rc, p);
            r->seq = 0;
            r->thread = b.thread;
            if (b.thread >= t->threads)
                t->threads = b.thread + 1;
        }
        next[b.thread] = b.index + i;
        if (cut) {
            fprintf(
                stderr,
                "fitalloc-replay: %s: warning: byte %zu: the file ends inside block %zu (%zu of "
                "%u bytes): its %u complete records are read, unchecked\n",
                t->path, at, k, l->size - at - sizeof b, b.bytes, i);
            break;
        }
        if (p != end)
            return bad_field(t, (uint64_t)(p - l->file),
                             "block %zu: %zu bytes left after its %u records", k, (size_t)(end - p),
                             b.records);
        at += sizeof b + b.bytes;
    }
    t->count = n;
    return 0;
}

/* The offset of record `index` (file order), for a message. */
static uint64_t record_offset(const struct trace *t, const struct layout *l, size_t index)
{
    size_t at = t->header.header_size, n = 0;
    while (l->size - at >= sizeof(struct fa_trace_block)) {
        struct fa_trace_block b;
        memcpy(&b, l->file + at, sizeof b);
        const uint8_t *p = l->file + at + sizeof b, *end = l->file + l->size;
        if (b.bytes <= l->size - at - sizeof b)
            end = p + b.bytes;
        struct fa_trace_state state = fa_trace_block_state(&b);
        struct fa_trace_record r;
        for (uint32_t i = 0; i < b.records; i++, n++) {
            if (n == index)
                return (uint64_t)(p - l->file);
            if (fa_trace_decode(&state, &p, end, &r) != FA_TRACE_DECODED)
                break;
        }
        at += sizeof b + b.bytes;
    }
    return at;
}

/* records[i] = old records[order[i]], one cycle of the permutation at a time, without a second
 * copy of the records; order[] is used up (each entry set to its own index once done). */
static void permute(struct fa_trace_record *records, uint32_t *order, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (order[i] == i)
            continue;
        struct fa_trace_record first = records[i];
        size_t j = i;
        for (;;) {
            size_t from = order[j];
            order[j] = (uint32_t)j;
            if (from == i) {
                records[j] = first;
                break;
            }
            records[j] = records[from];
            j = from;
        }
    }
}

/* Records in program order, numbered: records[i] = old records[order[i]], seq i. */
static int put_in_order(struct trace *t, const struct layout *l)
{
    uint32_t *order = replay_map(t->count * sizeof *order);
    if (!order) {
        fprintf(stderr, "fitalloc-replay: %s: out of memory for %zu records\n", t->path, t->count);
        return -1;
    }
    uint32_t first, second;
    int rc = program_order(t->records, t->count, t->threads, order, &first, &second);
    if (rc == ORDER_DUPLICATE) {
        bad_field(t, record_offset(t, l, second),
                  "record %u repeats time %llu of thread %u (record %u)", second,
                  (unsigned long long)t->records[second].time_ns, t->records[second].thread, first);
    } else if (rc == ORDER_NO_MEMORY) {
        fprintf(stderr, "fitalloc-replay: %s: out of memory sorting %zu records\n", t->path,
                t->count);
    } else {
        permute(t->records, order, t->count);
        for (size_t i = 0; i < t->count; i++)
            t->records[i].seq = i;
    }
    replay_unmap(order, t->count * sizeof *order);
    return rc == ORDER_OK ? 0 : -1;
}

int trace_read_bytes(const void *bytes, size_t size, const char *name, struct trace *t)
{
    memset(t, 0, sizeof *t);
    t->path = name;
    struct layout l = {.file = bytes, .size = size};
    if (check_header(t, l.file, l.size) < 0 || scan_blocks(t, &l) < 0)
        return -1;
    t->mapping_bytes = l.records * sizeof(struct fa_trace_record);
    t->mapping = replay_map(t->mapping_bytes);
    if (!t->mapping) {
        fprintf(stderr, "fitalloc-replay: %s: out of memory for %zu records\n", name, l.records);
        return -1;
    }
    t->records = t->mapping;
    int rc = -1;
    uint64_t *next = replay_map(l.threads * sizeof *next);
    if (next) {
        rc = decode_blocks(t, &l, next);
        replay_unmap(next, l.threads * sizeof *next);
    } else {
        fprintf(stderr, "fitalloc-replay: %s: out of memory\n", name);
    }
    if (rc == 0)
        rc = put_in_order(t, &l);
    if (rc < 0)
        trace_release(t);
    return rc;
}

int trace_read(const char *path, struct trace *t)
{
    memset(t, 0, sizeof *t);
    t->path = path;
    void *file;
    size_t file_bytes, size;
    if (read_file(t, &file, &file_bytes, &size) < 0)
        return -1;
    int rc = trace_read_bytes(file, size, path, t);
    replay_unmap(file, file_bytes);
    return rc;
}

void trace_release(struct trace *t)
{
    replay_unmap(t->mapping, t->mapping_bytes);
    t->mapping = NULL;
    t->records = NULL;
    t->count = 0;
}

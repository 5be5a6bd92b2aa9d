/* The validating trace reader (trace_reader.h). The file is read into one anonymous mapping;
 * the records are checked where they lie and then put into program order in place. */
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

#include "replay_mem.h"

#define NO_RECORD UINT32_MAX
/* Record indexes are 32-bit (the order array): more records than this are refused. */
#define MAX_RECORDS ((size_t)UINT32_MAX - 1)
/* A header_size above this is a corrupt field, not a future format. */
#define MAX_HEADER_SIZE ((uint32_t)1 << 20)

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

/* The whole file in one mapping; -1 (message printed) if it cannot be read. */
static int read_file(struct trace *t, size_t *size)
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
    t->mapping = buf;
    t->mapping_bytes = capacity;
    *size = used;
    return 0;
}

static int check_header(struct trace *t, size_t size)
{
    const struct fa_trace_header *h = t->mapping;
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
    if (size < offsetof(struct fa_trace_header, record_size))
        return bad_field(t, size, "the file ends inside the header (header_size)");
    if (h->header_size < sizeof *h || h->header_size > MAX_HEADER_SIZE || h->header_size % 8)
        return bad_field(t, offsetof(struct fa_trace_header, header_size),
                         "bad header_size %u (expected %zu)", h->header_size, sizeof *h);
    if (size < offsetof(struct fa_trace_header, pid))
        return bad_field(t, size, "the file ends inside the header (record_size)");
    if (h->record_size != sizeof(struct fa_trace_record))
        return bad_field(t, offsetof(struct fa_trace_header, record_size),
                         "bad record_size %u (expected %zu)", h->record_size,
                         sizeof(struct fa_trace_record));
    if (size < h->header_size)
        return bad_field(t, size, "the file ends inside the header (%u bytes)", h->header_size);
    memcpy(&t->header, h, sizeof t->header);
    return 0;
}

static uint64_t record_offset(const struct trace *t, size_t k)
{
    return t->header.header_size + (uint64_t)k * sizeof(struct fa_trace_record);
}

static int check_records(struct trace *t)
{
    for (size_t k = 0; k < t->count; k++) {
        const struct fa_trace_record *r = &t->records[k];
        uint64_t at = record_offset(t, k);
        /* The check byte first: a torn record usually has a wrong op too, and the check byte
         * is the better explanation. */
        if (fa_trace_check(r) != r->check)
            return bad_field(t, at + offsetof(struct fa_trace_record, check),
                             "record %zu has a bad check byte", k);
        if (r->op < 1 || r->op > FA_TRACE_OP_MAX)
            return bad_field(t, at + offsetof(struct fa_trace_record, op),
                             "record %zu has an unknown op %u", k, r->op);
        if (r->align_log2 > 63)
            return bad_field(t, at + offsetof(struct fa_trace_record, align_log2),
                             "record %zu has a bad alignment (2^%u)", k, r->align_log2);
        if (r->thread >= t->threads)
            t->threads = r->thread + 1;
    }
    return 0;
}

static int duplicate_seq(const struct trace *t, uint32_t first, uint32_t second)
{
    uint32_t later = first > second ? first : second, earlier = first > second ? second : first;
    return bad_field(t, record_offset(t, later) + offsetof(struct fa_trace_record, seq),
                     "record %u repeats seq %llu of record %u", later,
                     (unsigned long long)t->records[later].seq, earlier);
}

struct seq_index {
    uint64_t seq;
    uint32_t index;
};

static int by_seq(const void *a, const void *b)
{
    const struct seq_index *x = a, *y = b;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* order[i]: the file index of the record with the i-th smallest seq. Dense seqs (the usual
 * case: only lost buffers leave gaps) are placed directly by seq in O(n); sparse ones are
 * sorted. -1 on a duplicate seq (message printed) or when memory runs out. */
static int program_order(struct trace *t, uint32_t *order)
{
    if (t->count == 0)
        return 0;
    uint64_t min = UINT64_MAX, max = 0;
    for (size_t k = 0; k < t->count; k++) {
        min = t->records[k].seq < min ? t->records[k].seq : min;
        max = t->records[k].seq > max ? t->records[k].seq : max;
    }
    uint64_t range = max - min + 1;
    if (range < t->count)
        range = t->count; /* a duplicate: found below */
    t->lost = range - t->count;
    if (range <= t->count + t->count / 2 + 4096) {
        uint32_t *slot = replay_map(range * sizeof *slot);
        if (!slot)
            goto no_memory;
        memset(slot, 0xff, range * sizeof *slot); /* NO_RECORD */
        for (size_t k = 0; k < t->count; k++) {
            uint64_t s = t->records[k].seq - min;
            if (slot[s] != NO_RECORD) {
                uint32_t first = slot[s];
                replay_unmap(slot, range * sizeof *slot);
                return duplicate_seq(t, first, (uint32_t)k);
            }
            slot[s] = (uint32_t)k;
        }
        size_t n = 0;
        for (uint64_t s = 0; s < range; s++)
            if (slot[s] != NO_RECORD)
                order[n++] = slot[s];
        replay_unmap(slot, range * sizeof *slot);
        return 0;
    }
    struct seq_index *pairs = replay_map(t->count * sizeof *pairs);
    if (!pairs)
        goto no_memory;
    for (size_t k = 0; k < t->count; k++)
        pairs[k] = (struct seq_index){t->records[k].seq, (uint32_t)k};
    qsort(pairs, t->count, sizeof *pairs, by_seq);
    for (size_t i = 0; i < t->count; i++) {
        if (i > 0 && pairs[i].seq == pairs[i - 1].seq) {
            int rc = duplicate_seq(t, pairs[i - 1].index, pairs[i].index);
            replay_unmap(pairs, t->count * sizeof *pairs);
            return rc;
        }
        order[i] = pairs[i].index;
    }
    replay_unmap(pairs, t->count * sizeof *pairs);
    return 0;
no_memory:
    fprintf(stderr, "fitalloc-replay: %s: out of memory sorting %zu records\n", t->path, t->count);
    return -1;
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

int trace_read(const char *path, struct trace *t)
{
    memset(t, 0, sizeof *t);
    t->path = path;
    size_t size;
    if (read_file(t, &size) < 0)
        return -1;
    if (check_header(t, size) < 0)
        goto fail;
    size_t body = size - t->header.header_size;
    t->count = body / sizeof(struct fa_trace_record);
    t->records = (struct fa_trace_record *)((char *)t->mapping + t->header.header_size);
    size_t partial = body % sizeof(struct fa_trace_record);
    if (t->count > MAX_RECORDS) {
        bad_field(t, record_offset(t, MAX_RECORDS), "more than %zu records", MAX_RECORDS);
        goto fail;
    }
    if (check_records(t) < 0)
        goto fail;
    if (partial)
        fprintf(stderr,
                "fitalloc-replay: %s: warning: byte %llu: the file ends inside record %zu "
                "(%zu of %zu bytes): ignored\n",
                path, (unsigned long long)record_offset(t, t->count), t->count, partial,
                sizeof(struct fa_trace_record));
    uint32_t *order = replay_map(t->count * sizeof *order);
    if (!order) {
        fprintf(stderr, "fitalloc-replay: %s: out of memory for %zu records\n", path, t->count);
        goto fail;
    }
    int rc = program_order(t, order);
    if (rc == 0)
        permute(t->records, order, t->count);
    replay_unmap(order, t->count * sizeof *order);
    if (rc < 0)
        goto fail;
    return 0;
fail:
    trace_release(t);
    return -1;
}

void trace_release(struct trace *t)
{
    replay_unmap(t->mapping, t->mapping_bytes);
    t->mapping = NULL;
    t->records = NULL;
    t->count = 0;
}

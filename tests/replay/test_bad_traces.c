/* Traces fitalloc-replay must refuse (exit 3, a message naming the file and the byte offset of
 * the first bad field) or read in part (a file cut short: the complete records, a warning):
 * bad magic, version, header and record sizes, a header cut short, a bad check byte, an
 * unknown op, a duplicate seq, a missing file; and an empty trace, which is fine. */
#include "replay_test.h"

#define RECORDS 12
#define HEADER sizeof(struct fa_trace_header)
#define RECORD sizeof(struct fa_trace_record)

static struct trace_builder good_records(void)
{
    struct trace_builder tb = {0};
    for (uint64_t i = 0; i < RECORDS / 2; i++)
        tb_malloc(&tb, 100 + i, 0x1000 * (i + 1));
    for (uint64_t i = 0; i < RECORDS / 2; i++)
        tb_free(&tb, 0x1000 * (i + 1));
    return tb;
}

/* Replay `path` and expect exit 3 with "<path>: byte <offset>: <what>" on stderr. */
static void expect_refused(const char *path, unsigned long long offset, const char *what)
{
    struct run_result r = run_replay("bad", (char *)path, "--csv");
    char want[512];
    snprintf(want, sizeof want, "fitalloc-replay: %s: byte %llu: %s", path, offset, what);
    CHECK_RUN(r, 3, want);
    CHECK_EQ(strlen(r.out), 0);
    run_result_release(&r);
}

static void write_with_header(const char *path, const struct fa_trace_header *h,
                              const struct trace_builder *tb)
{
    write_trace_as(path, h, tb->records, tb->count, NULL, 0);
}

static void test_header_fields(const struct trace_builder *tb)
{
    struct fa_trace_header h = trace_header();
    h.magic[0] = 'X';
    write_with_header("bad-magic.fat", &h, tb);
    expect_refused("bad-magic.fat", 0, "not a fitalloc trace");

    h = trace_header();
    h.version = 2;
    write_with_header("bad-version.fat", &h, tb);
    expect_refused("bad-version.fat", offsetof(struct fa_trace_header, version), "version 2");

    h = trace_header();
    h.version = __builtin_bswap32(FA_TRACE_VERSION);
    write_with_header("bad-order.fat", &h, tb);
    expect_refused("bad-order.fat", offsetof(struct fa_trace_header, version),
                   "written on a machine of the other byte order");

    h = trace_header();
    h.header_size = 12;
    write_with_header("bad-header-size.fat", &h, tb);
    expect_refused("bad-header-size.fat", offsetof(struct fa_trace_header, header_size),
                   "bad header_size 12");

    h = trace_header();
    h.record_size = 40;
    write_with_header("bad-record-size.fat", &h, tb);
    expect_refused("bad-record-size.fat", offsetof(struct fa_trace_header, record_size),
                   "bad record_size 40");

    /* A file that ends inside the header's record_size field. */
    h = trace_header();
    FILE *f = fopen("short-header.fat", "wb");
    CHECK(f && fwrite(&h, 18, 1, f) == 1 && fclose(f) == 0);
    expect_refused("short-header.fat", 18, "the file ends inside the header");

    f = fopen("empty-file.fat", "wb");
    CHECK(f && fclose(f) == 0);
    expect_refused("empty-file.fat", 0, "not a fitalloc trace");
}

static void test_bad_records(const struct trace_builder *tb)
{
    struct fa_trace_header h = trace_header();
    /* Record 5's check byte: the file is written, then one byte of the record flipped. */
    write_trace("bad-check.fat", tb);
    FILE *f = fopen("bad-check.fat", "r+b");
    CHECK(f != NULL);
    CHECK(fseek(f, (long)(HEADER + 5 * RECORD + 16), SEEK_SET) == 0); /* its size field */
    fputc(0x77, f);
    CHECK(fclose(f) == 0);
    expect_refused("bad-check.fat", HEADER + 5 * RECORD + offsetof(struct fa_trace_record, check),
                   "record 5 has a bad check byte");

    /* Record 7 with op 0 and a correct check byte. */
    struct trace_builder bad = *tb;
    bad.records = malloc(tb->count * RECORD);
    CHECK(bad.records != NULL);
    memcpy(bad.records, tb->records, tb->count * RECORD);
    bad.records[7].op = 0;
    write_with_header("bad-op.fat", &h, &bad);
    expect_refused("bad-op.fat", HEADER + 7 * RECORD + offsetof(struct fa_trace_record, op),
                   "record 7 has an unknown op 0");

    /* Record 9 repeats the seq of record 3: the later record in the file is named. */
    memcpy(bad.records, tb->records, tb->count * RECORD);
    bad.records[9].seq = bad.records[3].seq;
    write_with_header("bad-seq.fat", &h, &bad);
    expect_refused("bad-seq.fat", HEADER + 9 * RECORD + offsetof(struct fa_trace_record, seq),
                   "record 9 repeats seq 3 of record 3");

    /* The same with sparse seqs (sorted, not placed by seq). */
    for (size_t i = 0; i < bad.count; i++)
        bad.records[i].seq = (uint64_t)i << 40;
    bad.records[10].seq = bad.records[2].seq;
    write_with_header("bad-seq-sparse.fat", &h, &bad);
    expect_refused("bad-seq-sparse.fat",
                   HEADER + 10 * RECORD + offsetof(struct fa_trace_record, seq),
                   "record 10 repeats seq");
    free(bad.records);

    struct run_result r = run_replay("missing", "no-such-trace.fat");
    CHECK_RUN(r, 3, "no-such-trace.fat: cannot open");
    run_result_release(&r);
}

static void test_readable(const struct trace_builder *tb)
{
    /* Cut short: 20 bytes of record 12 follow the 12 complete records. */
    struct fa_trace_header h = trace_header();
    write_trace_as("truncated.fat", &h, tb->records, tb->count, NULL, 20);
    struct run_result r = run_replay("truncated", "truncated.fat", "--csv", "--policy", "best");
    char want[128];
    snprintf(want, sizeof want, "warning: byte %zu: the file ends inside record 12",
             HEADER + RECORDS * RECORD);
    CHECK_RUN(r, 0, want);
    CHECK_EQ(csv_u64(r.out, "best", "ops"), RECORDS);
    CHECK_EQ(csv_u64(r.out, "best", "unmatched"), 0);
    CHECK_EQ(csv_u64(r.out, "best", "peak_live"), 100 + 101 + 102 + 103 + 104 + 105);
    run_result_release(&r);

    /* Records in another file order with a gap in seq (a lost buffer): fine, with a note. */
    struct trace_builder gap = {0};
    tb_malloc(&gap, 64, 0x1000);
    tb_malloc(&gap, 64, 0x2000);
    tb_free(&gap, 0x1000);
    gap.records[1].seq = 5;
    gap.records[2].seq = 9;
    size_t order[] = {2, 0, 1};
    write_trace_as("gap.fat", &h, gap.records, gap.count, order, 0);
    r = run_replay("gap", "gap.fat", "--csv", "--policy", "first");
    CHECK_RUN(r, 0, "7 operations missing");
    CHECK_EQ(csv_u64(r.out, "first", "ops"), 3);
    CHECK_EQ(csv_u64(r.out, "first", "unmatched"), 0);
    run_result_release(&r);
    tb_release(&gap);

    /* A header and no records. */
    write_trace_as("empty.fat", &h, NULL, 0, NULL, 0);
    r = run_replay("empty", "empty.fat", "--csv", "--engine");
    CHECK_RUN(r, 0, "");
    CHECK_EQ(csv_u64(r.out, "first", "ops"), 0);
    CHECK_EQ(csv_u64(r.out, "first", "peak_heap"), 0);
    CHECK_EQ(csv_u64(r.out, "engine", "ops"), 0);
    run_result_release(&r);
}

int main(void)
{
    struct trace_builder tb = good_records();
    test_header_fields(&tb);
    test_bad_records(&tb);
    test_readable(&tb);
    tb_release(&tb);
    return 0;
}

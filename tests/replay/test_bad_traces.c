/* Traces fitalloc-replay must refuse (exit 3, a message naming the file and the byte offset of
 * the first bad field, block or record) or read in part (a file cut short: the complete records
 * of the blocks there are, a warning): bad magic, version, header and block header sizes, a
 * header cut short, a block with a bad tag, a bad checksum, more records than its bytes can
 * hold, fewer or more records than its header says, a record with an unknown op, a thread's
 * records going back in its numbering, two records of a thread with the same time, a missing
 * file; a file cut inside a block or inside a block header; a gap in a thread's numbering (a
 * lost buffer); and an empty trace, which is fine. */
#include "replay_test.h"

#define RECORDS 12
#define HEADER sizeof(struct fa_trace_header)
#define BLOCK sizeof(struct fa_trace_block)

/* 6 mallocs on thread 0, then their 6 frees on thread 1: two blocks. */
static struct trace_builder good_records(void)
{
    struct trace_builder tb = {0};
    for (uint64_t i = 0; i < RECORDS / 2; i++)
        tb_malloc(&tb, 100 + i, 0x1000 * (i + 1));
    for (uint64_t i = 0; i < RECORDS / 2; i++) {
        tb_free(&tb, 0x1000 * (i + 1));
        tb.records[tb.count - 1].thread = 1;
    }
    return tb;
}

/* Thread 0 mallocs 64 bytes at 0x1000 and 0x2000; thread 1 makes the call (op, size, in,
 * out); thread 0 frees last_free. */
static struct trace_builder one_on_thread1(unsigned op, uint64_t size, uint64_t in, uint64_t out,
                                           uint64_t last_free)
{
    struct trace_builder tb = {0};
    tb_malloc(&tb, 64, 0x1000);
    tb_malloc(&tb, 64, 0x2000);
    tb_add(&tb, op, size, in, out)->thread = 1;
    tb_free(&tb, last_free);
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
                              const struct trace_builder *tb, struct trace_layout *layout)
{
    write_trace_as(path, h, tb->records, tb->count, NULL, layout);
}

static void test_header_fields(const struct trace_builder *tb)
{
    struct fa_trace_header h = trace_header();
    h.magic[0] = 'X';
    write_with_header("bad-magic.fat", &h, tb, NULL);
    expect_refused("bad-magic.fat", 0, "not a fitalloc trace");

/* A trace whose header has `field` = value is refused at that field, saying message. */
#define BAD_HEADER(file, field, value, message)                                                    \
    do {                                                                                           \
        h = trace_header();                                                                        \
        h.field = value;                                                                           \
        write_with_header(file, &h, tb, NULL);                                                     \
        expect_refused(file, offsetof(struct fa_trace_header, field), message);                    \
    } while (0)
    BAD_HEADER("bad-version.fat", version, 3, "version 3, this reader knows version 2");
    BAD_HEADER("bad-order.fat", version, __builtin_bswap32(FA_TRACE_VERSION),
               "written on a machine of the other byte order");
    BAD_HEADER("bad-header-size.fat", header_size, 12, "bad header_size 12");
    BAD_HEADER("bad-block-header-size.fat", block_header_size, 40, "bad block_header_size 40");
#undef BAD_HEADER

    /* A file that ends inside the header's block_header_size field. */
    h = trace_header();
    FILE *f = fopen("short-header.fat", "wb");
    CHECK(f && fwrite(&h, 18, 1, f) == 1 && fclose(f) == 0);
    expect_refused("short-header.fat", 18, "the file ends inside the header");

    f = fopen("empty-file.fat", "wb");
    CHECK(f && fclose(f) == 0);
    expect_refused("empty-file.fat", 0, "not a fitalloc trace");
}

static void test_bad_blocks(const struct trace_builder *tb)
{
    struct fa_trace_header h = trace_header();
    struct trace_layout l;
    write_with_header("good.fat", &h, tb, &l);
    CHECK_EQ(l.blocks, 2);
    CHECK_EQ(l.block_at[0], HEADER);
    CHECK_EQ(l.records, RECORDS);

    /* Block 1's tag. */
    write_with_header("bad-tag.fat", &h, tb, NULL);
    patch_file("bad-tag.fat", l.block_at[1], 'X', false, 0);
    expect_refused("bad-tag.fat", l.block_at[1], "block 1 has a bad tag");

    /* A byte of record 2 changed: block 0's checksum fails, the block is named. */
    write_with_header("bad-checksum.fat", &h, tb, NULL);
    patch_file("bad-checksum.fat", l.record_at[3] - 1, 0x77, false, 0);
    expect_refused("bad-checksum.fat", l.block_at[0], "block 0 has a bad checksum");

    /* The checksum made right again after each change: the other checks. */
    write_with_header("bad-count.fat", &h, tb, NULL);
    patch_block_u32("bad-count.fat", l.block_at[0], offsetof(struct fa_trace_block, records), 1000);
    expect_refused("bad-count.fat", l.block_at[0] + offsetof(struct fa_trace_block, records),
                   "block 0: 1000 records cannot fit in");

    write_with_header("bad-op.fat", &h, tb, NULL);
    patch_file("bad-op.fat", l.record_at[4], 0x0c, true, l.block_at[0]);
    expect_refused("bad-op.fat", l.record_at[4], "record 4 has an unknown op 12");

    /* The header says 7 records where there are 6: the 7th would start at the next block. */
    write_with_header("bad-more.fat", &h, tb, NULL);
    patch_block_u32("bad-more.fat", l.block_at[0], offsetof(struct fa_trace_block, records), 7);
    expect_refused("bad-more.fat", l.block_at[1], "record 6 goes past the end of block 0");

    /* 5 where there are 6: record 5's bytes are left over. */
    write_with_header("bad-fewer.fat", &h, tb, NULL);
    patch_block_u32("bad-fewer.fat", l.block_at[0], offsetof(struct fa_trace_block, records), 5);
    char want[128];
    snprintf(want, sizeof want, "block 0: %zu bytes left after its 5 records",
             l.block_at[1] - l.record_at[5]);
    expect_refused("bad-fewer.fat", l.record_at[5], want);
}

static void test_bad_order(const struct trace_builder *tb)
{
    struct fa_trace_header h = trace_header();
    struct trace_layout l;
    /* Record 9 (thread 1) takes the time of record 7: the later record in the file is named. */
    struct trace_builder bad = tb_copy(tb, 0);
    bad.records[9].time_ns = bad.records[7].time_ns;
    write_with_header("bad-time.fat", &h, &bad, &l);
    expect_refused("bad-time.fat", l.record_at[9],
                   "record 9 repeats time 700 of thread 1 (record 7)");
    free(bad.records);

    /* Block 1 (thread 1) numbered as if thread 1 had 3 records before it: it has none... */
    write_with_header("bad-number.fat", &h, tb, &l);
    patch_block_u32("bad-number.fat", l.block_at[1], offsetof(struct fa_trace_block, index), 3);
    struct run_result r = run_replay("bad-number", "bad-number.fat", "--csv");
    CHECK_RUN(r, 0, "3 operations missing"); /* ...which were lost */
    run_result_release(&r);

    /* ...and a thread's block that goes back in its numbering. */
    struct trace_builder again = one_on_thread1(FA_TRACE_MALLOC, 64, 0, 0x3000, 0x1000);
    write_with_header("bad-again.fat", &h, &again, &l);
    CHECK_EQ(l.blocks, 3);
    patch_block_u32("bad-again.fat", l.block_at[2], offsetof(struct fa_trace_block, index), 1);
    expect_refused("bad-again.fat", l.block_at[2] + offsetof(struct fa_trace_block, index),
                   "block 2 starts at record 1 of thread 0, which has 2 records before it");
    tb_release(&again);

    r = run_replay("missing", "no-such-trace.fat");
    CHECK_RUN(r, 3, "no-such-trace.fat: cannot open");
    run_result_release(&r);
}

static void test_readable(const struct trace_builder *tb)
{
    /* Cut inside the last record: block 1's complete records are read, with a warning. */
    struct fa_trace_header h = trace_header();
    struct trace_builder more = tb_copy(tb, 1);
    tb_malloc(&more, 4096, 0x9000);
    more.records[RECORDS].thread = 1;
    struct trace_layout l;
    write_with_header("truncated.fat", &h, &more, &l);
    cut_file("truncated.fat", l.size - 1);
    struct run_result r = run_replay("truncated", "truncated.fat", "--csv", "--policy", "best");
    char want[256];
    snprintf(want, sizeof want,
             "warning: byte %zu: the file ends inside block 1 (%zu of %zu bytes): its 6 complete "
             "records are read, unchecked",
             l.block_at[1], l.size - 1 - l.block_at[1] - BLOCK, l.size - l.block_at[1] - BLOCK);
    CHECK_RUN(r, 0, want);
    CHECK_EQ(csv_u64(r.out, "best", "ops"), RECORDS);
    CHECK_EQ(csv_u64(r.out, "best", "unmatched"), 0);
    CHECK_EQ(csv_u64(r.out, "best", "peak_live"), 100 + 101 + 102 + 103 + 104 + 105);
    run_result_release(&r);
    tb_release(&more);

    /* Cut inside block 1's header: block 0 is read. */
    write_with_header("cut-header.fat", &h, tb, &l);
    cut_file("cut-header.fat", l.block_at[1] + 20);
    r = run_replay("cut-header", "cut-header.fat", "--csv", "--policy", "best");
    snprintf(want, sizeof want,
             "warning: byte %zu: the file ends inside the header of block 1 (20 of 48 bytes): "
             "ignored",
             l.block_at[1]);
    CHECK_RUN(r, 0, want);
    CHECK_EQ(csv_u64(r.out, "best", "ops"), RECORDS / 2);
    run_result_release(&r);

    /* A gap in thread 0's numbering (a lost buffer) and records in another file order: fine,
     * with a note. */
    struct trace_builder gap = one_on_thread1(FA_TRACE_FREE, 0, 0x1000, 0, 0x2000);
    size_t order[] = {3, 2, 0, 1};
    write_trace_as("gap.fat", &h, gap.records, gap.count, order, &l);
    CHECK_EQ(l.blocks, 3);
    /* Block 2 holds thread 0's records 1 and 2 (record 0 is in block 1): now 8 and 9. */
    patch_block_u32("gap.fat", l.block_at[2], offsetof(struct fa_trace_block, index), 8);
    r = run_replay("gap", "gap.fat", "--csv", "--policy", "first");
    CHECK_RUN(r, 0, "7 operations missing");
    CHECK_EQ(csv_u64(r.out, "first", "ops"), 4);
    CHECK_EQ(csv_u64(r.out, "first", "unmatched"), 0);
    CHECK_EQ(csv_u64(r.out, "first", "peak_live"), 128);
    run_result_release(&r);
    tb_release(&gap);

    /* A header and no blocks. */
    write_trace_as("empty.fat", &h, NULL, 0, NULL, NULL);
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
    test_bad_blocks(&tb);
    test_bad_order(&tb);
    test_readable(&tb);
    tb_release(&tb);
    return 0;
}

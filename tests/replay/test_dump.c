/* --dump prints exactly the trace's records, in program order (the file holds them in another
 * order, one thread's records out of time order too), one line each: "seq time_ns thread op
 * size align in out", seq being the record's place in that order. */
#include "replay_test.h"

int main(void)
{
    struct trace_builder tb = {0};
    struct fa_trace_record *r;
    tb_malloc(&tb, 24, 0x5000);
    r = tb_add(&tb, FA_TRACE_CALLOC, 4000, 0, 0x6000);
    r->thread = 1;
    tb_add(&tb, FA_TRACE_REALLOC, 100, 0x5000, 0x7010);
    r = tb_add(&tb, FA_TRACE_ALIGNED, 64, 0, 0x8000);
    r->align_log2 = 12;
    r->thread = 2;
    tb_add(&tb, FA_TRACE_NEW, 8, 0, 0x9000);
    tb_add(&tb, FA_TRACE_NEW_ARRAY, 80, 0, 0xa000);
    tb_add(&tb, FA_TRACE_DELETE, 8, 0x9000, 0);
    tb_add(&tb, FA_TRACE_DELETE_ARRAY, 0, 0xa000, 0);
    tb_add(&tb, FA_TRACE_FREE, 0, 0x7010, 0);
    tb_add(&tb, FA_TRACE_MALLOC, 1ull << 40, 0, 0); /* failed: out 0 */
    /* The program got 2^50 bytes; no heap of the replay can give them. */
    tb_add(&tb, FA_TRACE_MALLOC, 1ull << 50, 0, 0xb000);
    r = tb_add(&tb, FA_TRACE_FREE, 0, 0xb000, 0);
    r->time_ns = 123456789012ull;
    struct fa_trace_header h = trace_header();
    size_t order[] = {3, 9, 0, 1, 11, 2, 8, 4, 5, 10, 6, 7};
    write_trace_as("dump.fat", &h, tb.records, tb.count, order, NULL);

    const char *expected = "0 0 0 malloc 24 0 0x0 0x5000\n"
                           "1 100 1 calloc 4000 0 0x0 0x6000\n"
                           "2 200 0 realloc 100 0 0x5000 0x7010\n"
                           "3 300 2 aligned 64 4096 0x0 0x8000\n"
                           "4 400 0 new 8 0 0x0 0x9000\n"
                           "5 500 0 new[] 80 0 0x0 0xa000\n"
                           "6 600 0 delete 8 0 0x9000 0x0\n"
                           "7 700 0 delete[] 0 0 0xa000 0x0\n"
                           "8 800 0 free 0 0 0x7010 0x0\n"
                           "9 900 0 malloc 1099511627776 0 0x0 0x0\n"
                           "10 1000 0 malloc 1125899906842624 0 0x0 0xb000\n"
                           "11 123456789012 0 free 0 0 0xb000 0x0\n";
    struct run_result res = run_replay("dump", "dump.fat", "--dump");
    CHECK_RUN(res, 0, "");
    CHECK_MSG(strcmp(res.out, expected) == 0, "--dump printed:\n%s\nexpected:\n%s", res.out,
              expected);
    CHECK_EQ(strlen(res.err), 0);
    run_result_release(&res);

    /* The records replay as they read: every pointer matched, the malloc the program saw fail
     * skipped, the one that fails in the replay counted (and its free not unmatched). */
    res = run_replay("dump-replay", "dump.fat", "--csv", "--policy", "first", "--engine");
    CHECK_RUN(res, 0, "");
    CHECK_EQ(csv_u64(res.out, "first", "unmatched"), 0);
    CHECK_EQ(csv_u64(res.out, "first", "failed"), 1);
    CHECK_EQ(csv_u64(res.out, "first", "peak_live"), 4000 + 100 + 64 + 8 + 80);
    CHECK_EQ(csv_u64(res.out, "engine", "unmatched"), 0);
    CHECK_EQ(csv_u64(res.out, "engine", "failed"), 1);
    run_result_release(&res);
    tb_release(&tb);
    return 0;
}

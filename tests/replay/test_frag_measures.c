/* fitalloc-replay's fragmentation measures (docs/replay.md) on a sequence worked out by hand.
 * A classic block is the request + 16-byte header, rounded up to 16 (48 at least):
 *
 *   op 0  a = 100  (block 128)            live  100, standard blocks  128, heap  128
 *   op 1  b = 1000 (block 1024)           live 1100, standard blocks 1152, heap 1152
 *   op 2  c = 100  (block 128)            live 1200, standard blocks 1280, heap 1280
 *   op 3  free b: a hole of 1024          live  200, standard blocks  256
 *   op 4  d = 2000 (block 2016): the hole is too small, the heap grows to 3296
 *                                         live 2200, standard blocks 2272: both peaks
 *   op 5  free d                          the heap stays at 3296
 *
 * First and best fit: heap at peak live 3296 (3296 / 2200 = 1.498, 49.8 % fragmentation with
 * the overheads; 3296 / 2272 = 1.451 without them). Granted (usable: block - 16) 112 + 1008 +
 * 112 + 2000 = 3232 for 3200 requested.
 *
 * The buddy system: blocks of a power of two at a multiple of their size. a takes 128 at 0;
 * b 1024 at 1024, the break moving to 2048 (128-1024 tiled by free blocks of 128, 256, 512); c
 * the free 128 at 128; b's 1024 freed does not merge (its buddy, 0-1024, is split); d's 2048
 * goes at 2048: heap 4096 at the peak. Granted 112 + 1008 + 112 + 2032 = 3264, by size class
 * (usable bytes in [2^k, 2^(k+1))): 2 blocks from 64, 1 from 512, 1 from 1024. */
#include "replay_test.h"

#define A 0x10000
#define B 0x20000
#define C 0x30000
#define D 0x40000

static void check_measures(const char *csv, const char *config, uint64_t heap, uint64_t granted)
{
    CHECK_EQ(csv_u64(csv, config, "peak_live"), 2200);
    CHECK_EQ(csv_u64(csv, config, "peak_live_blocks"), 2272);
    CHECK_EQ(csv_u64(csv, config, "heap_at_peak_live"), heap);
    CHECK_EQ(csv_u64(csv, config, "heap_at_peak_live_blocks"), heap);
    CHECK_EQ(csv_u64(csv, config, "peak_heap"), heap);
    CHECK_NEAR(csv_double(csv, config, "granted_over_requested"), granted / 3200.0, 1e-6);
}

int main(void)
{
    struct trace_builder tb = {0};
    tb_malloc(&tb, 100, A);
    tb_malloc(&tb, 1000, B);
    tb_malloc(&tb, 100, C);
    tb_free(&tb, B);
    tb_malloc(&tb, 2000, D);
    tb_free(&tb, D);
    write_trace("frag_measures.fat", &tb);

    struct run_result r = run_replay("frag_measures", "frag_measures.fat", "--csv");
    CHECK_RUN(r, 0, "");
    check_measures(r.out, "first", 3296, 3232);
    check_measures(r.out, "best", 3296, 3232);
    check_measures(r.out, "buddy", 4096, 3264);
    run_result_release(&r);

    /* Granted by size class (usable bytes, powers of two): buddy's 112, 112 | 1008 | 2032. */
    r = run_replay("frag_measures_json", "frag_measures.fat", "--policy", "buddy", "--json");
    CHECK_RUN(r, 0, "");
    CHECK_MSG(strstr(r.out, "\"size_classes\": [{\"from\": 64, \"allocs\": 2, \"requested\": 200, "
                            "\"granted\": 224}, {\"from\": 512, \"allocs\": 1, \"requested\": "
                            "1000, \"granted\": 1008}, {\"from\": 1024, \"allocs\": 1, "
                            "\"requested\": 2000, \"granted\": 2032}]") != NULL,
              "%s", r.out);
    run_result_release(&r);

    /* The engine: no header, 16-byte alignment: standard blocks at the peak 112 + 112 + 2000. */
    r = run_replay("frag_measures_engine", "frag_measures.fat", "--policy", "best", "--engine",
                   "--csv");
    CHECK_RUN(r, 0, "");
    CHECK_EQ(csv_u64(r.out, "engine", "peak_live"), 2200);
    CHECK_EQ(csv_u64(r.out, "engine", "peak_live_blocks"), 2224);
    CHECK(csv_u64(r.out, "engine", "heap_at_peak_live") >= 2224);
    run_result_release(&r);
    tb_release(&tb);
    return 0;
}

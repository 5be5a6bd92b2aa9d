/* fitalloc-replay --mesh: the engine row "engine-mesh" runs with meshing, a pass at every
 * sample point, and with --map-out writes the engine's series and its pages at every sample
 * (engine-mesh.pages.csv). On a heap of 64-byte blocks 90 % of which die in a random order,
 * meshing gives memory back (its heap ends below half of the engine's without meshing), the
 * last sample's pages hold exactly the live blocks, and some of them share physical pages. */
#include "replay_test.h"

#define BLOCKS 40000
#define SIZE 64
#define SAMPLES 20

/* The last sample's pages: bytes in live blocks and bytes sharing a physical page. */
static void last_pages(const char *path, unsigned long long *live, unsigned long long *shared)
{
    char *text = read_whole_file(path);
    const char *header = "op,start,block_size,capacity,used,shared,returned\n";
    CHECK_MSG(strncmp(text, header, strlen(header)) == 0, "%s: header", path);
    unsigned long long last_op = 0;
    *live = *shared = 0;
    for (const char *p = text + strlen(header); *p; p = strchr(p, '\n') + 1) {
        unsigned long long op, start, block_size, capacity, used, sh, returned;
        CHECK(sscanf(p, "%llu,%llu,%llu,%llu,%llu,%llu,%llu", &op, &start, &block_size, &capacity,
                     &used, &sh, &returned) == 7);
        CHECK_LE(used, capacity);
        CHECK_LE(sh + returned, capacity * block_size + 4096);
        if (op > last_op)
            last_op = op, *live = *shared = 0;
        *live += used * block_size;
        *shared += sh;
    }
    CHECK_EQ(last_op, BLOCKS + BLOCKS / 10 * 9 - 1);
    free(text);
}

int main(void)
{
    struct trace_builder tb = {0};
    static uint64_t order[BLOCKS];
    for (uint64_t i = 0; i < BLOCKS; i++) {
        tb_malloc(&tb, SIZE, 0x100000 + i * SIZE);
        order[i] = i;
    }
    /* A random 90 % freed, in a random order. */
    fa_rng rng;
    fa_rng_seed(&rng, 3);
    for (size_t i = BLOCKS; i > 1; i--) {
        size_t j = fa_rng_below(&rng, i);
        uint64_t t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    for (size_t i = 0; i < BLOCKS / 10 * 9; i++)
        tb_free(&tb, 0x100000 + order[i] * SIZE);
    write_trace("mesh.fat", &tb);
    if (system("rm -rf mesh-out") != 0)
        return 1;

    struct run_result plain =
        run_replay("plain", "mesh.fat", "--csv", "--policy", "none", "--engine", "--samples", "20");
    CHECK_RUN(plain, 0, "");
    struct run_result mesh = run_replay("mesh", "mesh.fat", "--csv", "--policy", "none", "--mesh",
                                        "--samples", "20", "--map-out", "mesh-out");
    CHECK_RUN(mesh, 0, "");
    unsigned long long without = csv_u64(plain.out, "engine", "end_heap");
    unsigned long long with = csv_u64(mesh.out, "engine-mesh", "end_heap");
    CHECK_MSG(with < without / 2, "end heap %llu with meshing, %llu without", with, without);

    unsigned long long live, shared;
    last_pages("mesh-out/engine-mesh.pages.csv", &live, &shared);
    CHECK_EQ(live, (unsigned long long)(BLOCKS - BLOCKS / 10 * 9) * SIZE);
    CHECK_GT(shared, 0);
    CHECK(access("mesh-out/engine-mesh.series.csv", R_OK) == 0);
    run_result_release(&plain);
    run_result_release(&mesh);
    tb_release(&tb);
    return 0;
}

/* --map-out DIR writes, for every lab configuration, DIR/<config>.blocks.csv and
 * DIR/<config>.series.csv with the documented headers (creating DIR and its parents); the
 * blocks still live at the end are exactly the trace's live pointers (one each, at least as
 * large as asked, never overlapping) and the series ends at the last operation with the
 * trace's live bytes. */
#include "random_trace.h"

#define OPS 5000
#define SAMPLES 50

struct block_line {
    long long alloc_op, free_op;
    unsigned long long offset, size;
};

static int by_offset(const void *a, const void *b)
{
    const struct block_line *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The live blocks' total size, checked against the trace as it goes. */
static void check_blocks(const char *path, const struct trace_builder *tb, uint64_t live_bytes)
{
    char *text = read_whole_file(path);
    const char *header = "alloc_op,free_op,offset,size\n";
    CHECK_MSG(strncmp(text, header, strlen(header)) == 0, "%s: header", path);
    size_t cap = 1024, n = 0;
    struct block_line *live = malloc(cap * sizeof *live);
    CHECK(live != NULL);
    uint64_t lines = 0, live_size = 0, asked = 0;
    for (const char *p = text + strlen(header); *p; p = strchr(p, '\n') + 1) {
        struct block_line b;
        CHECK(sscanf(p, "%lld,%lld,%llu,%llu", &b.alloc_op, &b.free_op, &b.offset, &b.size) == 4);
        CHECK_LT(b.alloc_op, OPS);
        CHECK(b.free_op == -1 || (b.free_op >= b.alloc_op && b.free_op < OPS));
        lines++;
        if (b.free_op != -1)
            continue;
        /* A live block: its operation allocated what the program still holds. */
        const struct fa_trace_record *r = &tb->records[b.alloc_op];
        CHECK(r->out != 0);
        CHECK_GE(b.size, r->size);
        asked += r->size;
        live_size += b.size;
        if (n == cap) {
            cap *= 2;
            live = realloc(live, cap * sizeof *live);
            CHECK(live != NULL);
        }
        live[n++] = b;
    }
    CHECK_GT(lines, n);
    CHECK_EQ(asked, live_bytes);
    CHECK_GE(live_size, live_bytes);
    qsort(live, n, sizeof *live, by_offset);
    for (size_t i = 1; i < n; i++)
        CHECK_LE(live[i - 1].offset + live[i - 1].size, live[i].offset);
    free(live);
    free(text);
}

static void check_series(const char *path, uint64_t live_bytes)
{
    char *text = read_whole_file(path);
    const char *header = "op,heap_bytes,live_bytes,free_bytes,largest_free,free_blocks\n";
    CHECK_MSG(strncmp(text, header, strlen(header)) == 0, "%s: header", path);
    size_t points = 0;
    unsigned long long op = 0, heap = 0, live = 0, free_bytes = 0, largest = 0, blocks = 0;
    long long last_op = -1;
    for (const char *p = text + strlen(header); *p; p = strchr(p, '\n') + 1) {
        CHECK(sscanf(p, "%llu,%llu,%llu,%llu,%llu,%llu", &op, &heap, &live, &free_bytes, &largest,
                     &blocks) == 6);
        CHECK((long long)op > last_op);
        last_op = (long long)op;
        CHECK_LE(free_bytes, heap);
        CHECK_LE(largest, free_bytes);
        CHECK(blocks == 0 ? free_bytes == 0 : largest > 0);
        points++;
    }
    CHECK_EQ(points, SAMPLES);
    CHECK_EQ(op, OPS - 1);
    CHECK_EQ(live, live_bytes);
    free(text);
}

int main(void)
{
    struct trace_builder tb = {0};
    uint64_t live_bytes;
    random_trace(&tb, OPS, 7, &live_bytes);
    write_trace("map.fat", &tb);
    if (system("rm -rf map-out") != 0)
        return 1;

    struct run_result r = run_replay("map", "map.fat", "--csv", "--engine", "--samples", "50",
                                     "--map-out", "map-out/nested");
    CHECK_RUN(r, 0, "");
    const char *configs[] = {"first",      "next", "best",  "worst",
                             "segregated", "tlsf", "buddy", "slab"};
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, "map-out/nested/%s.blocks.csv", configs[i]);
        check_blocks(path, &tb, live_bytes);
        snprintf(path, sizeof path, "map-out/nested/%s.series.csv", configs[i]);
        check_series(path, live_bytes);
    }
    /* Only lab configurations have blocks files (the engine: its series and pages). */
    CHECK(access("map-out/nested/engine.blocks.csv", F_OK) != 0);
    run_result_release(&r);

    r = run_replay("map-list", "map.fat", "--policy", "next", "--index", "list", "--samples", "50",
                   "--map-out", "map-out/nested");
    CHECK_RUN(r, 0, "");
    check_blocks("map-out/nested/next-list.blocks.csv", &tb, live_bytes);
    check_series("map-out/nested/next-list.series.csv", live_bytes);
    run_result_release(&r);

    /* A file where the directory should be. */
    FILE *f = fopen("map-out/file", "w");
    CHECK(f && fclose(f) == 0);
    r = run_replay("map-bad", "map.fat", "--policy", "best", "--map-out", "map-out/file/sub");
    CHECK_RUN(r, 1, "map-out/file");
    run_result_release(&r);
    tb_release(&tb);
    return 0;
}

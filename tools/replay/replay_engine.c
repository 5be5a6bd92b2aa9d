/* The engine backend (replay.h): the library's fast engine through its public fa_* API, in
 * this process. Its heap is the engine's `committed` bytes (include/fitalloc-stats.h: the
 * memory it holds from the OS that may have pages behind it), less what was committed before
 * the replay began; its free bytes are committed bytes not in live blocks (bytes_in_use).
 *
 * Nothing else in the program uses the engine: fitalloc-replay is linked without the
 * interposition layer, so its own malloc is the C library's, and its big arrays are mapped
 * (replay_mem.h). main() makes sure the engine runs in its default mode with time-based
 * purging deferred (replay_env.h), so the row depends on the operations only. With meshing
 * (--mesh: FITALLOC_MESH=1, the row "engine-mesh"), a mesh pass runs at every sample point
 * (fa_collect), for the same reason. With --map-out, the pages at every sample point
 * (engine_pages.h).
 */
#include <stdio.h>

#include "engine/committed.h"
#include "engine_pages.h"
#include "fitalloc-stats.h"
#include "fitalloc.h"
#include "replay.h"

struct engine_state {
    uint64_t base_committed; /* before the first operation */
    bool mesh;
    bool keep_pages;
    struct replay_array pages; /* struct engine_page, with keep_pages */
};

static void stats_now(struct fa_stats *s)
{
    s->size = sizeof *s;
    fa_stats_get(s);
}

static void *engine_alloc(void *state, size_t size, size_t alignment, bool zeroed)
{
    (void)state;
    if (zeroed)
        return fa_calloc(1, size);
    if (alignment > 16)
        return fa_memalign(alignment, size);
    return fa_malloc(size);
}

static void engine_free(void *state, void *p)
{
    (void)state;
    fa_free(p);
}

static void *engine_realloc(void *state, void *p, size_t size)
{
    (void)state;
    /* realloc(p, 0) frees p and returns NULL (glibc's rule, which the engine follows): the
     * driver asks for 0 bytes only when the program got a block back, so ask for one byte. */
    return fa_realloc(p, size ? size : 1);
}

static uint64_t committed_since(const struct engine_state *s, uint64_t committed)
{
    return committed > s->base_committed ? committed - s->base_committed : 0;
}

static void engine_sample(void *state, struct replay_point *pt)
{
    struct engine_state *s = state;
    if (s->mesh)
        fa_collect();
    if (s->keep_pages && !engine_pages_take(&s->pages, pt->op)) {
        fprintf(stderr,
                "fitalloc-replay: out of memory for the engine's pages: the map stops "
                "at operation %llu\n",
                (unsigned long long)pt->op);
        s->keep_pages = false;
    }
    struct fa_stats st;
    stats_now(&st);
    pt->heap_bytes = committed_since(s, st.committed);
    pt->free_bytes = st.committed > st.bytes_in_use ? st.committed - st.bytes_in_use : 0;
    if (pt->free_bytes > pt->heap_bytes)
        pt->free_bytes = pt->heap_bytes;
}

/* After every operation: the engine's committed counter alone (fa_stats_get walks every
 * segment). */
static uint64_t engine_heap_bytes(void *state)
{
    return committed_since(state, _fa_stats_committed());
}

/* An engine block has no header; every block is 16-byte aligned, 16 bytes at least. */
static uint64_t engine_standard_block(size_t size)
{
    uint64_t block = (size + 15) & ~(uint64_t)15;
    return block > 16 ? block : 16;
}

static size_t engine_usable(void *state, const void *p)
{
    (void)state;
    return fa_malloc_usable_size(p);
}

static bool engine_finish(void *state, struct replay_row *row)
{
    struct engine_state *s = state;
    struct fa_stats st;
    stats_now(&st);
    row->engine = true;
    uint64_t peak = committed_since(s, st.peak_committed);
    if (peak > row->peak_heap)
        row->peak_heap = peak;
    row->splits = row->coalesces = 0;
    row->free_blocks_end = 0;
    row->free_blocks_mean = row->frag_largest_end = row->frag_largest_mean = 0;
    return true;
}

bool replay_engine_open(struct replay_backend *b, bool mesh, bool keep_pages)
{
    struct engine_state *s = replay_map(sizeof *s);
    if (!s) {
        fprintf(stderr, "fitalloc-replay: out of memory for the engine replay\n");
        return false;
    }
    struct fa_stats st;
    stats_now(&st);
    s->base_committed = st.committed;
    s->mesh = mesh;
    s->keep_pages = keep_pages;
    *b = (struct replay_backend){
        .name = mesh ? "engine-mesh" : "engine",
        .state = s,
        .alloc = engine_alloc,
        .free = engine_free,
        .realloc = engine_realloc,
        .sample = engine_sample,
        .heap_bytes = engine_heap_bytes,
        .standard_block = engine_standard_block,
        .finish = engine_finish,
        .usable = engine_usable,
    };
    return true;
}

const struct replay_array *replay_engine_pages(const struct replay_backend *b)
{
    return &((const struct engine_state *)b->state)->pages;
}

void replay_engine_close(struct replay_backend *b)
{
    replay_array_release(&((struct engine_state *)b->state)->pages);
    replay_unmap(b->state, sizeof(struct engine_state));
    b->state = NULL;
}

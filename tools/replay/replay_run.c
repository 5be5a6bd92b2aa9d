/* The replay driver (replay.h): what each record means, and the measurements.
 *
 *   malloc, calloc, new, new[], aligned   a block of `size` bytes (aligned ones with their
 *                                         alignment) stands for the pointer `out`
 *   free, delete, delete[]                the block of `in` is freed
 *   realloc                               in = 0: an allocation; out = 0 and size = 0: a free
 *                                         (realloc(p, 0) frees); out = 0 otherwise: it failed
 *                                         and nothing changed; else the block of `in` is
 *                                         resized or moved and stands for `out`
 *
 * An allocation the program saw fail (out = 0) is not replayed; one that fails here is counted
 * in failed, and the later free of its pointer is skipped. A free or realloc of a pointer the
 * trace never returned is counted as unmatched and its free is skipped (a realloc's new block
 * is still allocated: the program has it). A pointer returned again while its block is still
 * live here means the free in between was lost with its buffer: that block is freed first
 * (counted in reused_live).
 *
 * Besides the samples, after every operation: the live bytes as asked for and as standard
 * blocks (the backend's header and alignment), their peaks and the heap at each peak (the
 * fragmentation measures of docs/replay.md); at every allocation, the bytes asked for and
 * granted (internal fragmentation).
 */
#include <stdio.h>
#include <string.h>

#include "addr_map.h"
#include "op_cost.h"
#include "replay.h"

struct run {
    const struct replay_backend *b;
    const struct replay_options *opt;
    struct replay_row *row;
    struct replay_result *result;
    struct addr_map map;
    struct op_cost *cost;
    uint64_t op, live;
    uint64_t live_blocks; /* the live blocks as standard blocks (replay.h) */
    bool out_of_memory;
};

/* ---- blocks.csv ---- */

#define NO_BLOCK UINT64_MAX /* an id end_block ignores */

static uint64_t start_block(struct run *run, void *p)
{
    if (!run->opt->keep_map)
        return NO_BLOCK;
    struct replay_block *blk = replay_array_push(&run->result->blocks);
    if (!blk) {
        run->out_of_memory = true;
        return NO_BLOCK;
    }
    blk->alloc_op = run->op;
    blk->free_op = -1;
    blk->offset = run->b->offset(run->b->state, p);
    blk->size = run->b->usable(run->b->state, p);
    return run->result->blocks.count - 1;
}

static void end_block(struct run *run, uint64_t id)
{
    if (run->opt->keep_map && id < run->result->blocks.count)
        ((struct replay_block *)run->result->blocks.items)[id].free_op = (int64_t)run->op;
}

/* ---- the heap calls, timed ---- */

static void *timed_alloc(struct run *run, size_t size, size_t alignment, bool zeroed)
{
    uint64_t t0 = op_cost_now();
    void *p = run->b->alloc(run->b->state, size, alignment, zeroed);
    op_cost_add(run->cost, op_cost_now() - t0);
    if (!p)
        run->row->failed++;
    return p;
}

static void timed_free(struct run *run, void *p)
{
    uint64_t t0 = op_cost_now();
    run->b->free(run->b->state, p);
    op_cost_add(run->cost, op_cost_now() - t0);
}

static void *timed_realloc(struct run *run, void *p, size_t size)
{
    uint64_t t0 = op_cost_now();
    void *q = run->b->realloc(run->b->state, p, size);
    op_cost_add(run->cost, op_cost_now() - t0);
    if (!q)
        run->row->failed++;
    return q;
}

/* ---- the address map ---- */

/* ---- what is live, what was granted ---- */

static void count_granted(struct run *run, const void *p, uint64_t size)
{
    struct replay_row *row = run->row;
    uint64_t granted = run->b->usable(run->b->state, p);
    row->requested += size;
    row->granted += granted;
    unsigned k = granted ? 63u - (unsigned)__builtin_clzll(granted) : 0;
    struct replay_size_class *c =
        &row->size_classes[k < REPLAY_SIZE_CLASSES ? k : REPLAY_SIZE_CLASSES - 1];
    c->allocs++;
    c->requested += size;
    c->granted += granted;
}

static void live_remove(struct run *run, const struct addr_entry *e)
{
    run->live -= e->size;
    if (e->block)
        run->live_blocks -= run->b->standard_block(e->size);
}

static void forget(struct run *run, struct addr_entry *e)
{
    end_block(run, e->id);
    live_remove(run, e);
    addr_map_remove(&run->map, e);
}

/* Let `block` stand for the program's pointer key from now on. block NULL: the replay could
 * not allocate what the program got (counted in failed); the key is still known, so that its
 * free is not taken for one of a pointer the trace never returned. */
static void bind(struct run *run, uint64_t key, void *block, uint64_t size, uint64_t id)
{
    struct addr_entry *old = addr_map_find(&run->map, key);
    if (old) {
        run->result->reused_live++;
        if (old->block)
            run->b->free(run->b->state, old->block);
        forget(run, old);
    }
    struct addr_entry *e = addr_map_insert(&run->map, key);
    if (!e) {
        run->out_of_memory = true;
        return;
    }
    e->block = block;
    e->size = size;
    e->id = id;
    run->live += size;
    if (block)
        run->live_blocks += run->b->standard_block(size);
}

/* ---- the operations ---- */

static void replay_alloc(struct run *run, const struct fa_trace_record *r, size_t alignment,
                         bool zeroed)
{
    if (!r->out)
        return;
    void *p = timed_alloc(run, r->size, alignment, zeroed);
    if (p) {
        count_granted(run, p, r->size);
        bind(run, r->out, p, r->size, start_block(run, p));
    } else
        bind(run, r->out, NULL, 0, NO_BLOCK);
}

static void replay_free(struct run *run, uint64_t key)
{
    if (!key)
        return;
    struct addr_entry *e = addr_map_find(&run->map, key);
    if (!e) {
        run->row->unmatched++;
        return;
    }
    if (e->block)
        timed_free(run, e->block);
    forget(run, e);
}

static void replay_realloc(struct run *run, const struct fa_trace_record *r)
{
    if (!r->in) {
        replay_alloc(run, r, 0, false);
        return;
    }
    if (!r->out) {
        if (r->size == 0)
            replay_free(run, r->in);
        return;
    }
    struct addr_entry *e = addr_map_find(&run->map, r->in);
    if (!e || !e->block) {
        /* A pointer we know nothing of, or whose allocation failed here: the program's new
         * block is still allocated. */
        if (e)
            forget(run, e);
        else
            run->row->unmatched++;
        replay_alloc(run, r, 0, false);
        return;
    }
    struct addr_entry was = *e;
    void *q = timed_realloc(run, was.block, r->size);
    uint64_t id = was.id, size = r->size;
    if (!q) {
        /* The program's realloc worked, ours did not: the old block stays, standing for the
         * new pointer, with its old size. */
        q = was.block;
        size = was.size;
    } else {
        /* A new line of blocks.csv, even in place: the line's alloc_op is the operation that
         * gave the program this pointer and this size. */
        end_block(run, id);
        id = start_block(run, q);
        count_granted(run, q, size);
    }
    live_remove(run, &was);
    addr_map_remove(&run->map, e);
    bind(run, r->out, q, size, id);
}

static void replay_one(struct run *run, const struct fa_trace_record *r)
{
    size_t alignment = r->align_log2 ? (size_t)1 << r->align_log2 : 0;
    switch (r->op) {
    case FA_TRACE_MALLOC:
    case FA_TRACE_NEW:
    case FA_TRACE_NEW_ARRAY:
    case FA_TRACE_ALIGNED: replay_alloc(run, r, alignment, false); break;
    case FA_TRACE_CALLOC: replay_alloc(run, r, alignment, true); break;
    case FA_TRACE_FREE:
    case FA_TRACE_DELETE:
    case FA_TRACE_DELETE_ARRAY: replay_free(run, r->in); break;
    case FA_TRACE_REALLOC: replay_realloc(run, r); break;
    default: break; /* the reader lets no other op through */
    }
}

/* ---- sampling ---- */

/* Operation index after which sample k of n is taken: evenly spaced, the last one after the
 * last operation. */
static uint64_t sample_op(uint64_t k, uint64_t samples, uint64_t ops)
{
    return (uint64_t)(((unsigned __int128)(k + 1) * ops) / samples) - 1;
}

static void take_sample(struct run *run, struct replay_point *pt)
{
    memset(pt, 0, sizeof *pt);
    pt->op = run->op;
    run->b->sample(run->b->state, pt);
    pt->live_bytes = run->live;
}

static double frag_free(const struct replay_point *pt)
{
    return pt->heap_bytes ? (double)pt->free_bytes / (double)pt->heap_bytes : 0.0;
}

static double frag_largest(const struct replay_point *pt)
{
    return pt->free_bytes ? 1.0 - (double)pt->largest_free / (double)pt->free_bytes : 0.0;
}

/* The peaks after an operation, and the heap at each. */
static void track_peaks(struct run *run)
{
    struct replay_row *row = run->row;
    if (run->live <= row->peak_live && run->live_blocks <= row->peak_live_blocks)
        return;
    uint64_t heap = run->b->heap_bytes(run->b->state);
    if (run->live > row->peak_live) {
        row->peak_live = run->live;
        row->heap_at_peak_live = heap;
    }
    if (run->live_blocks > row->peak_live_blocks) {
        row->peak_live_blocks = run->live_blocks;
        row->heap_at_peak_live_blocks = heap;
    }
}

static void summarise(struct run *run, const struct replay_point *end)
{
    struct replay_row *row = run->row;
    const struct replay_point *pts = run->result->series.items;
    size_t n = run->result->series.count;
    double sum_free = 0, sum_largest = 0, sum_blocks = 0;
    for (size_t i = 0; i < n; i++) {
        sum_free += frag_free(&pts[i]);
        sum_largest += frag_largest(&pts[i]);
        sum_blocks += (double)pts[i].free_blocks;
    }
    row->frag_free_end = frag_free(end);
    row->frag_largest_end = frag_largest(end);
    row->free_blocks_end = end->free_blocks;
    row->end_heap = end->heap_bytes;
    row->frag_free_mean = n ? sum_free / (double)n : row->frag_free_end;
    row->frag_largest_mean = n ? sum_largest / (double)n : row->frag_largest_end;
    row->free_blocks_mean = n ? sum_blocks / (double)n : (double)row->free_blocks_end;
    row->granted_over_requested =
        row->requested ? (double)row->granted / (double)row->requested : 0.0;
}

bool replay_run(const struct trace *t, const struct replay_backend *b,
                const struct replay_options *opt, struct replay_row *row,
                struct replay_result *result)
{
    memset(row, 0, sizeof *row);
    memset(result, 0, sizeof *result);
    snprintf(row->config, sizeof row->config, "%s", b->name);
    row->ops = t->count;
    result->blocks.item_size = sizeof(struct replay_block);
    result->series.item_size = sizeof(struct replay_point);
    struct run run = {.b = b, .opt = opt, .row = row, .result = result};
    run.cost = replay_map(sizeof *run.cost);
    if (!run.cost || !addr_map_init(&run.map)) {
        replay_unmap(run.cost, sizeof *run.cost);
        fprintf(stderr, "fitalloc-replay: out of memory for the replay of %s\n", b->name);
        return false;
    }
    uint64_t samples = opt->samples < t->count ? opt->samples : t->count;
    uint64_t next = 0, next_op = samples ? sample_op(0, samples, t->count) : 0;
    for (run.op = 0; run.op < t->count && !run.out_of_memory; run.op++) {
        replay_one(&run, &t->records[run.op]);
        track_peaks(&run);
        uint64_t heap = b->heap_bytes(b->state);
        if (heap > row->peak_heap)
            row->peak_heap = heap;
        if (next < samples && run.op == next_op) {
            struct replay_point *pt = replay_array_push(&result->series);
            if (!pt) {
                run.out_of_memory = true;
                break;
            }
            take_sample(&run, pt);
            next++;
            next_op = next < samples ? sample_op(next, samples, t->count) : 0;
        }
    }
    bool ok = !run.out_of_memory;
    if (ok) {
        /* The last sample is taken after the last operation: it is the end state. */
        struct replay_point end;
        if (result->series.count)
            end = ((struct replay_point *)result->series.items)[result->series.count - 1];
        else
            take_sample(&run, &end);
        summarise(&run, &end);
        row->mean_ns = op_cost_mean(run.cost);
        row->p99_ns = op_cost_p99(run.cost);
        ok = b->finish(b->state, row);
    } else {
        fprintf(stderr, "fitalloc-replay: out of memory during the replay of %s\n", b->name);
    }
    addr_map_release(&run.map);
    replay_unmap(run.cost, sizeof *run.cost);
    return ok;
}

void replay_result_release(struct replay_result *result)
{
    replay_array_release(&result->blocks);
    replay_array_release(&result->series);
}

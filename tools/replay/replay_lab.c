/* The lab backend (replay.h): one classic heap of the lab (src/lab/heap/classic_heap.h) on its own,
 * with the lab's standard configuration — the policy and index asked for, coalescing on, no
 * arena, segregated fit's exact lists up to 128 bytes (FITALLOC_LAB_EXACT_MAX's default) —
 * described at sample points by its counters and its index, and checked at the end by the heap
 * walk (src/lab/heap/heap_walk.h). */
#include <stdio.h>
#include <string.h>

#include "lab/heap/classic_heap.h"
#include "lab/heap/heap_walk.h"
#include "largest_free.h"
#include "replay.h"

#define LAB_EXACT_MAX 128
/* Address space for the heap (no memory behind it until used), halved down to the smallest
 * when the system refuses it (ulimit -v, sanitizers), as the lab itself does. */
#define LAB_RESERVE ((size_t)1 << 40)
#define LAB_RESERVE_MIN ((size_t)64 << 20)

struct lab_state {
    fa_classic_heap *heap;
};

static fa_classic_heap *heap_of(void *state)
{
    return ((struct lab_state *)state)->heap;
}

/* calloc is replayed like malloc: zeroing would only touch the payload, which the replay never
 * reads, and costs the same under every policy. */
static void *lab_alloc(void *state, size_t size, size_t alignment, bool zeroed)
{
    (void)zeroed;
    if (alignment > FA_BLOCK_ALIGN)
        return _fa_classic_heap_alloc_aligned(heap_of(state), alignment, size);
    return _fa_classic_heap_alloc(heap_of(state), size);
}

static void lab_free(void *state, void *p)
{
    _fa_classic_heap_free(heap_of(state), p, "free");
}

/* The lab's realloc without the copy: in place when the heap can, else a new block and the
 * old one freed after it (as _fa_lab_instance_realloc does). */
static void *lab_realloc(void *state, void *p, size_t size)
{
    fa_classic_heap *h = heap_of(state);
    if (_fa_classic_heap_resize(h, p, size))
        return p;
    void *q = _fa_classic_heap_alloc(h, size);
    if (q)
        _fa_classic_heap_free(h, p, "realloc");
    return q;
}

/* The heap's free space at a sample point: its own counters, and its index for the largest
 * free block (largest_free.h); the heap walk checks them at the end of the replay
 * (lab_finish). */
static void sample_heap(fa_classic_heap *h, struct replay_point *pt)
{
    pt->heap_bytes = FA_HEAP_READ(h, heap_bytes);
    pt->free_bytes = FA_HEAP_READ(h, free_size);
    pt->free_blocks = FA_HEAP_READ(h, free_blocks);
    pt->largest_free = lab_largest_free_block(h);
}

static void lab_sample(void *state, struct replay_point *pt)
{
    sample_heap(heap_of(state), pt);
}

struct walk_tally {
    uint64_t heap_bytes, free_bytes, free_blocks, largest_free;
};

static void tally_block(uintptr_t block, size_t size, bool used, void *arg)
{
    (void)block;
    struct walk_tally *t = arg;
    t->heap_bytes += size;
    if (used)
        return;
    t->free_bytes += size;
    t->free_blocks++;
    if (size > t->largest_free)
        t->largest_free = size;
}

/* The end state by the heap walk, against the sample taken from the counters and the index:
 * false if they disagree (the figures would be wrong). */
static bool walk_agrees(fa_classic_heap *h)
{
    struct walk_tally walk = {0};
    _fa_classic_heap_walk(h, tally_block, &walk);
    struct replay_point pt = {0};
    sample_heap(h, &pt);
    return walk.heap_bytes == pt.heap_bytes && walk.free_bytes == pt.free_bytes &&
           walk.free_blocks == pt.free_blocks && walk.largest_free == pt.largest_free;
}

static uint64_t lab_heap_bytes(void *state)
{
    return FA_HEAP_READ(heap_of(state), heap_bytes);
}

static bool lab_finish(void *state, struct replay_row *row)
{
    fa_classic_heap *h = heap_of(state);
    row->splits = FA_HEAP_READ(h, splits);
    row->coalesces = FA_HEAP_READ(h, coalesces);
    if (walk_agrees(h))
        return true;
    fprintf(stderr, "fitalloc-replay: %s: the heap walk disagrees with the heap's counters\n",
            row->config);
    return false;
}

/* A classic block: the 16-byte header, the payload rounded to 16 bytes, 48 bytes at least. */
static uint64_t lab_standard_block(size_t size)
{
    uint64_t block =
        FA_BLOCK_HEADER + ((size + FA_BLOCK_ALIGN - 1) & ~(uint64_t)(FA_BLOCK_ALIGN - 1));
    return block > FA_BLOCK_MIN ? block : FA_BLOCK_MIN;
}

static uint64_t lab_offset(void *state, const void *p)
{
    return (uint64_t)((uintptr_t)p - heap_of(state)->start);
}

static size_t lab_usable(void *state, const void *p)
{
    return _fa_classic_heap_usable(heap_of(state), p, "malloc_usable_size");
}

bool replay_lab_open(struct replay_backend *b, const char *config, int policy, int index)
{
    struct fa_classic_heap_config cfg = {
        .policy = (enum fa_policy)policy,
        .index = (enum fa_lab_index)index,
        .coalesce = true,
        .arena = 0,
        .exact_max = LAB_EXACT_MAX,
    };
    fa_classic_heap *h = NULL;
    for (size_t reserve = LAB_RESERVE; !h && reserve >= LAB_RESERVE_MIN; reserve /= 2)
        h = _fa_classic_heap_create(&cfg, reserve);
    struct lab_state *s = h ? replay_map(sizeof *s) : NULL;
    if (!s) {
        fprintf(stderr, "fitalloc-replay: cannot create the lab heap for %s\n", config);
        _fa_classic_heap_destroy(h);
        return false;
    }
    s->heap = h;
    *b = (struct replay_backend){
        .name = config,
        .state = s,
        .alloc = lab_alloc,
        .free = lab_free,
        .realloc = lab_realloc,
        .sample = lab_sample,
        .heap_bytes = lab_heap_bytes,
        .standard_block = lab_standard_block,
        .finish = lab_finish,
        .offset = lab_offset,
        .usable = lab_usable,
    };
    return true;
}

void replay_lab_close(struct replay_backend *b)
{
    struct lab_state *s = b->state;
    if (!s)
        return;
    _fa_classic_heap_destroy(s->heap);
    replay_unmap(s, sizeof *s);
    b->state = NULL;
}

/* One replay: the operations of a trace, in program order and from one thread, applied to one
 * allocator (a backend: a lab heap, or the fast engine), giving one row of the output and,
 * when asked, the blocks and the series of the map files.
 *
 * The driver (replay_run.c) gives every record its meaning — what is allocated, freed or
 * resized, which replay block stands for which of the program's pointers — and measures; a
 * backend only allocates, frees, resizes and describes its heap at a sample point.
 */
#ifndef FA_REPLAY_H
#define FA_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "replay_mem.h"
#include "trace_reader.h"

/* Granted blocks by usable size: class k holds [2^k, 2^(k+1)) bytes. */
#define REPLAY_SIZE_CLASSES 48

struct replay_size_class {
    uint64_t allocs, requested, granted;
};

/* One row of the output (docs/replay.md defines every field). */
struct replay_row {
    char config[32];
    bool engine; /* largest free, free blocks, splits and coalesces have no meaning */
    uint64_t ops, peak_heap, end_heap, peak_live;
    double frag_free_mean, frag_free_end, frag_largest_mean, frag_largest_end;
    double free_blocks_mean;
    uint64_t free_blocks_end, splits, coalesces;
    double mean_ns;
    uint64_t p99_ns, failed, unmatched;
    /* Internal fragmentation: bytes asked for and usable bytes granted, over every block the
     * replay allocated (a realloc's block too), in all and by size class. */
    uint64_t requested, granted;
    double granted_over_requested;
    struct replay_size_class size_classes[REPLAY_SIZE_CLASSES];
    /* The fragmentation measures of Johnstone and Wilson (ISMM 1998): the heap when the live
     * bytes peaked; the same with live blocks counted in standard blocks (the backend's header
     * and alignment, no policy: standard_block), so that those overheads are not taken for
     * fragmentation. */
    uint64_t heap_at_peak_live, peak_live_blocks, heap_at_peak_live_blocks;
};

/* The heap at one point of the replay (a line of series.csv). Sizes of free blocks count the
 * whole block, header included. */
struct replay_point {
    uint64_t op; /* index of the last operation applied */
    uint64_t heap_bytes, live_bytes, free_bytes, largest_free, free_blocks;
};

/* A block of blocks.csv: allocated by operation alloc_op, freed by free_op (-1: live at the
 * end), at `offset` bytes from the heap's start (its payload), `size` usable bytes. */
struct replay_block {
    uint64_t alloc_op;
    int64_t free_op;
    uint64_t offset, size;
};

struct replay_backend {
    const char *name;
    void *state;
    /* NULL when the allocator has no memory for it. alignment: 0 for the default. */
    void *(*alloc)(void *state, size_t size, size_t alignment, bool zeroed);
    void (*free)(void *state, void *p);
    /* The block moved or resized to hold size bytes, or NULL (p unchanged). */
    void *(*realloc)(void *state, void *p, size_t size);
    /* The heap now: heap_bytes, free_bytes, largest_free, free_blocks (the driver fills op
     * and live_bytes). */
    void (*sample)(void *state, struct replay_point *point);
    /* Heap size after the operation just done, for the peaks (cheap). */
    uint64_t (*heap_bytes)(void *state);
    /* The smallest block the backend's format gives for size bytes: its header and its
     * alignment, whatever the policy (the overheads the measures set apart). */
    uint64_t (*standard_block)(size_t size);
    /* Usable size of a live block (the granted bytes). */
    size_t (*usable)(void *state, const void *p);
    /* The rest of the row: splits, coalesces and (engine) the peak the backend saw itself;
     * false (message printed) if the backend finds its own figures inconsistent. */
    bool (*finish)(void *state, struct replay_row *row);
    /* Lab heaps only (NULL otherwise), for blocks.csv: offset from the heap's start of a
     * live block. */
    uint64_t (*offset)(void *state, const void *p);
};

struct replay_options {
    size_t samples; /* points in the series and the means */
    bool keep_map;  /* fill blocks and series for the map files */
};

/* What a replay leaves besides its row. */
struct replay_result {
    struct replay_array blocks; /* struct replay_block, in allocation order (keep_map) */
    struct replay_array series; /* struct replay_point, one per sample point */
    uint64_t reused_live;       /* the program got a pointer still live here (lost frees) */
};

/* Replay t through b. false (message printed) when the replay's own memory runs out. */
bool replay_run(const struct trace *t, const struct replay_backend *b,
                const struct replay_options *opt, struct replay_row *row,
                struct replay_result *result);
void replay_result_release(struct replay_result *result);

/* The backends: a classic lab heap of one policy and index, and the fast engine (with
 * meshing; keeping its pages at each sample point). false (message printed) when it cannot be
 * created. */
bool replay_lab_open(struct replay_backend *b, const char *config, int policy, int index);
void replay_lab_close(struct replay_backend *b);
bool replay_engine_open(struct replay_backend *b, bool mesh, bool keep_pages);
/* The pages the engine backend took at each sample point (keep_pages). */
const struct replay_array *replay_engine_pages(const struct replay_backend *b);
void replay_engine_close(struct replay_backend *b);

#endif

/* The table through which the core (the fast engine, src/engine) reaches the allocation mode in
 * force: the core's own (engine/alloc.c), secure mode's (engine/secure/, libfitalloc-secure.so
 * only) or the lab's (FITALLOC_MODE=lab). process/ chooses it once, at process start; until
 * then it is the core's. The core tests no mode flag: where a mode differs, it calls the table.
 *
 * The inline fast paths never read it. A mode's blocks live in slow pages (secure mode) or
 * outside the core's segments (the lab, secure mode's malloc(0)), and in the lab no thread has
 * a heap, so every call on them misses the fast paths and reaches the slow paths, which ask the
 * table. Blocks the core served before the mode started stay the core's (`owns` tells them
 * apart). A mode may also make pages of its own in the core's segments (secure mode's, with
 * trailers and guard pages): the core marks them and calls the table's `pages` on them. */
#ifndef FA_MODE_H
#define FA_MODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fa_mode_pages;

struct fa_mode_ops {
    /* A malloc the fast paths could not serve: n bytes, 16-byte aligned; NULL and errno ENOMEM
     * when out of memory; malloc(0) unique. */
    void *(*malloc)(size_t n);
    /* n bytes aligned to `alignment` (a power of two above 16); NULL and ENOMEM. */
    void *(*aligned)(size_t alignment, size_t n);
    /* n bytes above the largest size class, aligned to `alignment`, zeroed if `zero`. */
    void *(*large)(size_t n, size_t alignment, bool zero);
    /* p is one of the mode's blocks outside the core's segments. NULL: the mode has none, and
     * the three below are never called. */
    bool (*owns)(const void *p);
    /* p is the mode's; a double free or a bad pointer aborts with a message naming caller;
     * size: the size a sized free gave (0: none). */
    void (*free)(void *p, const char *caller, size_t size);
    /* p is the mode's, n > 0: resized, contents kept; NULL and ENOMEM with p untouched. */
    void *(*realloc)(void *p, size_t n);
    size_t (*usable_size)(const void *p);
    /* Threads get no heap of the core: the mode serves every allocation. */
    bool heapless;
    uint8_t trace_id; /* the mode a trace's header names (include/fitalloc-trace.h) */
    /* The mode's part of a thread's end, of fork and of the exit report; NULL: none. */
    void (*thread_exit)(void);
    void (*fork_prepare)(void);
    void (*fork_parent)(void);
    void (*fork_child)(void);
    void (*stats_print)(int fd, bool json); /* FITALLOC_STATS at exit */
    /* The mode's own pages and large blocks inside the core's segments (engine/mode_pages.h:
     * the core calls them where such a page differs from its own); NULL: the mode makes none. */
    const struct fa_mode_pages *pages;
};

/* Never NULL. Set once, at process start. */
extern const struct fa_mode_ops *_fa_mode;

#endif

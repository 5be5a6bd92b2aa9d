/* The seam between the fast engine and the other allocation mode (the lab, FITALLOC_MODE=lab):
 * the mode's slow-path operations, chosen once at process start. The engine's fast paths stay
 * as they are: in the other mode no thread has a heap, so every call misses them and reaches
 * the slow paths, which hand it to the mode. Blocks the engine served before the mode started
 * stay the engine's (`owns` tells them apart). */
#ifndef FA_MODE_H
#define FA_MODE_H

#include <stdbool.h>
#include <stddef.h>

struct fa_mode_ops {
    /* n bytes, 16-byte aligned; NULL and errno ENOMEM when out of memory; malloc(0) unique. */
    void *(*malloc)(size_t n);
    /* n bytes aligned to `alignment` (a power of two above 16); NULL and ENOMEM. */
    void *(*aligned)(size_t alignment, size_t n);
    /* p is one of the mode's blocks (else it is the engine's, or foreign). */
    bool (*owns)(const void *p);
    /* p is the mode's; a double free or a bad pointer aborts with a message naming caller. */
    void (*free)(void *p, const char *caller);
    /* p is the mode's, n > 0: resized, contents kept; NULL and ENOMEM with p untouched. */
    void *(*realloc)(void *p, size_t n);
    size_t (*usable_size)(const void *p);
    void (*thread_exit)(void); /* from the thread-exit hook of a thread that used the mode */
    void (*fork_prepare)(void);
    void (*fork_parent)(void);
    void (*fork_child)(void);
    void (*stats_print)(int fd, bool json); /* FITALLOC_STATS at exit */
};

/* NULL: the fast engine serves everything. Set once, at process start. */
extern const struct fa_mode_ops *_fa_mode;

#endif

/* Large lab requests sent straight to the OS (FITALLOC_LAB_DIRECT): each gets its own mapping,
 * remembered in a small hash table so that free() can tell them from foreign pointers. The
 * table and the counters are guarded by one mutex: these requests are rare and each costs a
 * system call anyway. */
#ifndef FA_LAB_DIRECT_H
#define FA_LAB_DIRECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/mutex.h"

struct fa_direct_entry {
    uintptr_t addr; /* 0: empty slot, 1: deleted */
    size_t size;
};

struct fa_direct_registry {
    fa_mutex_t lock;
    struct fa_direct_entry *table; /* open addressing, linear probing; mapped from the OS */
    size_t capacity;               /* a power of two */
    size_t used;                   /* live and deleted slots */
    size_t live;                   /* read without the lock to skip the table when 0 */
    uint64_t allocs, frees, bytes;
};

/* A new mapping of at least n bytes aligned to alignment (<= 4096: page-aligned); NULL when the
 * OS refuses. */
void *_fa_direct_alloc(struct fa_direct_registry *r, size_t alignment, size_t n);
/* Unmap p if it is a direct block; false if it is not one. */
bool _fa_direct_free(struct fa_direct_registry *r, void *p);
/* The usable size of p if it is a direct block, else 0. */
size_t _fa_direct_usable(struct fa_direct_registry *r, const void *p);
/* Unmap every direct block and the table (the lab is going away). */
void _fa_direct_destroy(struct fa_direct_registry *r);

#endif

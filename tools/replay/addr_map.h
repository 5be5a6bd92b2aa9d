/* The address map of a replay: from a pointer the traced program got (the trace's `out`) to
 * the block the replay made for it. Open addressing with linear probing, in memory of its own
 * (replay_mem.h), kept at most half full; removal shifts the following entries back, so there
 * are no tombstones and lookups stay short however many blocks come and go.
 */
#ifndef FA_REPLAY_ADDR_MAP_H
#define FA_REPLAY_ADDR_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct addr_entry {
    uint64_t key;  /* the traced program's pointer; 0: an empty slot */
    void *block;   /* the replay's pointer */
    uint64_t size; /* bytes the program asked for */
    uint64_t id;   /* the block's record (blocks.csv), when kept */
};

struct addr_map {
    struct addr_entry *slots;
    size_t mask; /* capacity - 1 (a power of two) */
    unsigned shift;
    size_t count;
};

bool addr_map_init(struct addr_map *m);
void addr_map_release(struct addr_map *m);
/* The entry of key (not 0), or NULL. */
struct addr_entry *addr_map_find(const struct addr_map *m, uint64_t key);
/* A new entry for key (which must not be in the map), its other fields zero; NULL when memory
 * runs out. The pointer is valid until the next insertion or removal. */
struct addr_entry *addr_map_insert(struct addr_map *m, uint64_t key);
/* Remove an entry found by addr_map_find. */
void addr_map_remove(struct addr_map *m, struct addr_entry *e);

#endif

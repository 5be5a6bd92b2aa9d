/* Memory for the replay's own big arrays (records, the address map, block records, series),
 * taken straight from mmap: it never goes through the allocator a replay measures, and it is
 * returned to the OS as soon as it is unmapped. Fresh memory reads as zero.
 */
#ifndef FA_REPLAY_MEM_H
#define FA_REPLAY_MEM_H

#include <stdbool.h>
#include <stddef.h>

/* bytes of zeroed memory, or NULL. */
void *replay_map(size_t bytes);
/* Grow (or shrink) a mapping, moving it if needed; NULL on failure (the old one stays). */
void *replay_remap(void *p, size_t old_bytes, size_t new_bytes);
void replay_unmap(void *p, size_t bytes);

/* A growable array of fixed-size items in one mapping. */
struct replay_array {
    void *items;
    size_t item_size, count, capacity;
};

/* Room for one more item at the end; NULL when memory runs out. The pointer is valid until
 * the next push. */
void *replay_array_push(struct replay_array *a);
void replay_array_release(struct replay_array *a);

#endif

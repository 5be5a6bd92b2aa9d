/* mmap-backed memory for the replay's own arrays (replay_mem.h). */
#define _GNU_SOURCE
#include "replay_mem.h"

#include <stdint.h>
#include <sys/mman.h>

void *replay_map(size_t bytes)
{
    if (bytes == 0)
        bytes = 1;
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void *replay_remap(void *p, size_t old_bytes, size_t new_bytes)
{
    if (!p)
        return replay_map(new_bytes);
    void *q = mremap(p, old_bytes ? old_bytes : 1, new_bytes ? new_bytes : 1, MREMAP_MAYMOVE);
    return q == MAP_FAILED ? NULL : q;
}

void replay_unmap(void *p, size_t bytes)
{
    if (p)
        munmap(p, bytes ? bytes : 1);
}

void *replay_array_push(struct replay_array *a)
{
    if (a->count == a->capacity) {
        size_t capacity = a->capacity ? a->capacity * 2 : 4096;
        if (capacity > SIZE_MAX / a->item_size)
            return NULL;
        void *items = replay_remap(a->items, a->capacity * a->item_size, capacity * a->item_size);
        if (!items)
            return NULL;
        a->items = items;
        a->capacity = capacity;
    }
    return (char *)a->items + a->item_size * a->count++;
}

void replay_array_release(struct replay_array *a)
{
    replay_unmap(a->items, a->capacity * a->item_size);
    a->items = NULL;
    a->count = a->capacity = 0;
}

/* The heap walk of one classic heap: every block from the heap's start to its break, in
 * address order, with its size and whether it is in use; and on top of it the walk of a whole
 * lab (lab_walk.c), behind the public fa_lab_walk. Tools that draw a heap use the first.
 */
#ifndef FA_LAB_HEAP_WALK_H
#define FA_LAB_HEAP_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lab/index/block.h"
#include "fitalloc-lab.h"
#include "lab/heap/classic_heap.h"

/* Called once per block, in address order:
 *   block  the block's start: the address of its 16-byte header (block.h), not the payload
 *          (fa_block_payload(block) gives the pointer malloc returned for a used block);
 *   size   the whole block, header included (a multiple of 16, at least FA_BLOCK_MIN); the
 *          sizes of all blocks add up to the heap's heap_bytes counter (brk - start), and the
 *          sizes of the free ones to its free_size counter;
 *   used   false for a free block (in the index), true otherwise. A block another thread has
 *          freed and the owner has not taken back yet (thread mode's remote list) is still in
 *          use for the heap and its counters, so it is reported as used.
 * The callback must not touch the heap (no allocation or free in it, nor anything of
 * fitalloc): the walk reads the tags as it goes. */
typedef void fa_heap_block_fn(uintptr_t block, size_t size, bool used, void *arg);

/* Walk every block of h. The caller must have the heap to itself for the whole walk (hold its
 * lock, own it, or have stopped every thread that could use it), as for the checker. */
void _fa_classic_heap_walk(const fa_classic_heap *h, fa_heap_block_fn *fn, void *arg);

/* The usable bytes of a used block of `size` bytes (what fa_block_payload(block) may hold). */
static inline size_t fa_block_payload_size(size_t size)
{
    return size - FA_BLOCK_HEADER;
}

struct fa_lab;

/* lab_walk.c: fa_lab_walk on one lab (fitalloc-lab.h says which heaps each lock mode lets it
 * walk); returns the number of heaps walked. fn must not use the lab. */
unsigned _fa_lab_instance_walk(struct fa_lab *lab, fa_lab_walk_fn fn, void *arg);

#endif

/* The largest free block of a lab heap, for the replay's sample points.
 *
 * The heap's own _fa_classic_heap_largest_free visits every free block: at each of a replay's
 * (by default) 1000 sample points, a cache miss per free block of a heap that no longer fits
 * in the caches, which made the samples cost more than the replay itself under the policies
 * that leave many free blocks (next and worst fit). The tree indexes (fit_policy.h) hold the
 * answer in O(log n) instead:
 *   size tree (best and worst fit, segregated fit's larger blocks): its rightmost block;
 *   segregated fit with no larger block free: the largest non-empty exact list;
 *   TLSF: the highest non-empty list by its bitmaps, whose blocks are visited;
 *   buddy: the highest order whose list is not empty, by its bitmap;
 *   address tree (first and next fit): the largest size a first-fit search from the heap's
 *     start still finds, by bisection over sizes (each search one descent guided by the tree's
 *     augmented values).
 * The list index and the slab's lists have no such shortcut: their blocks are visited. replay_lab.c checks the answer
 * against the heap walk at the end of every replay.
 */
#ifndef FA_REPLAY_LARGEST_FREE_H
#define FA_REPLAY_LARGEST_FREE_H

#include <stddef.h>

#include "lab/heap/classic_heap.h"

/* The size of the largest free block, header included; 0 when no block is free. */
size_t lab_largest_free_block(fa_classic_heap *h);

#endif

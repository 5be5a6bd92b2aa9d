/* The heap walk of one classic heap (heap_walk.h): by block sizes from start to break. */
#include "lab/heap/heap_walk.h"

void _fa_classic_heap_walk(const fa_classic_heap *h, fa_heap_block_fn *fn, void *arg)
{
    uintptr_t block = h->start;
    while (block < h->brk) {
        uintptr_t w0 = fa_block_word0(block);
        size_t size = w0 & ~FA_TAG_FLAGS;
        /* A broken size would make the walk loop or leave the heap: stop rather than report
         * garbage (the checker, heap_check.c, is the place that says what is broken). */
        if (size < FA_BLOCK_MIN || size > h->brk - block)
            return;
        fn(block, size, !(w0 & FA_TAG_FREE), arg);
        block += size;
    }
}

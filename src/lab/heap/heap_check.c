/* The invariant checker of a classic heap. It proves, in O(n):
 *   - the index's own structure holds (tree order, colours, augmented values; list order);
 *   - walking the heap from start to break by block sizes lands exactly on the break, every
 *     size is a multiple of 16 and at least FA_BLOCK_MIN: the sizes sum to the heap size;
 *   - the tags agree: a block's PREV_FREE bit is its previous neighbour's FREE bit, a free
 *     block's footer repeats its size, a used block carries its check word;
 *   - with coalescing on, no two free blocks are neighbours; in the buddy layout, instead, every
 *     block is a power of two at a multiple of its size from the start, and no free block has
 *     its buddy free and whole (buddy.h); in the slab layout free blocks never merge, and
 *     its own rules hold (slab.h);
 *   - every free block is in the index exactly once, and nothing else is: the checker sets the
 *     MARK bit of every indexed block (a block met twice is already marked), then the heap walk
 *     clears the mark of each free block (one without a mark is missing from the index) and
 *     finds none on a used block;
 *   - the counters (blocks, free blocks, free bytes, heap bytes) match the walk.
 * It needs the heap to itself (the caller holds its lock or owns it).
 */
#include "common/message.h"
#include "platform/arch.h"
#include "platform/compiler.h"
#include "platform/os.h"
#include "lab/heap/buddy.h"
#include "lab/heap/classic_heap.h"
#include "lab/heap/slab.h"

__attribute__((noreturn, cold)) static void broken(const fa_classic_heap *h, const char *what,
                                                   uintptr_t block)
{
    _fa_fatal("fitalloc: lab heap %p: invariant broken: %s (block %p)\n", (const void *)h, what,
              (void *)block);
}

struct marking {
    fa_classic_heap *h;
    size_t count;
};

static void mark_indexed(uintptr_t block, void *arg)
{
    struct marking *m = arg;
    fa_classic_heap *h = m->h;
    if (block < h->start || block >= h->brk || (block & (FA_BLOCK_ALIGN - 1)))
        broken(h, "index holds an address outside the heap", block);
    uintptr_t w0 = fa_block_word0(block);
    if (!(w0 & FA_TAG_FREE))
        broken(h, "index holds a used block", block);
    if (w0 & FA_TAG_MARK)
        broken(h, "index holds a block twice", block);
    fa_block_set_word0(block, w0 | FA_TAG_MARK);
    m->count++;
}

void _fa_classic_heap_check(fa_classic_heap *h)
{
    _fa_index_check(&h->index, h);
    struct marking m = {h, 0};
    _fa_index_visit(&h->index, mark_indexed, &m);

    size_t blocks = 0, free_blocks = 0, free_size = 0;
    bool prev_free = false, buddy = fa_heap_is_buddy(h);
    uintptr_t block = h->start;
    while (block < h->brk) {
        uintptr_t w0 = fa_block_word0(block);
        size_t size = w0 & ~FA_TAG_FLAGS;
        bool is_free = w0 & FA_TAG_FREE;
        if (size < FA_BLOCK_MIN || (size & (FA_BLOCK_ALIGN - 1)) || size > h->brk - block)
            broken(h, "bad block size", block);
        if (buddy && ((size & (size - 1)) || (block - h->start) % size))
            broken(h, "buddy block not a power of two at a multiple of its size", block);
        if (!(w0 & FA_TAG_PREV_FREE) != !prev_free)
            broken(h, "PREV_FREE bit disagrees with the previous block", block);
        if (is_free) {
            if (*fa_block_footer(block, size) != size)
                broken(h, "free block's footer disagrees with its header", block);
            if ((fa_block_word1(block) & ~FA_WORD1_LOW_MASK) != FA_FREE_TAG)
                broken(h, "free block without the free tag", block);
            if (!(w0 & FA_TAG_MARK))
                broken(h, "free block missing from the index", block);
            if (prev_free && h->cfg.coalesce && !buddy && !fa_heap_is_slab(h))
                broken(h, "two neighbouring free blocks with coalescing on", block);
            if (buddy && h->cfg.coalesce) {
                uintptr_t other = fa_buddy_of(h, block, size);
                if (other < h->brk && fa_block_is_free(other) && fa_block_size(other) == size)
                    broken(h, "a free block's buddy is free and whole with coalescing on", block);
            }
            fa_block_set_word0(block, w0 & ~FA_TAG_MARK);
            free_blocks++;
            free_size += size;
        } else {
            uintptr_t w1 = fa_block_word1(block);
            if (w1 != fa_block_used_check(block) && w1 != fa_block_remote_check(block))
                broken(h, "used block without its check word", block);
        }
        prev_free = is_free;
        blocks++;
        block += size;
    }
    if (block != h->brk)
        broken(h, "blocks overrun the break", block);
    if (prev_free != h->last_free)
        broken(h, "the heap's last-block-free flag is wrong", block);
    if (m.count != free_blocks)
        broken(h, "index holds something that is not a free block", 0);
    if (h->brk - h->start != h->count.heap_bytes)
        broken(h, "heap bytes counter differs from the break", 0);
    if (blocks != h->count.blocks)
        broken(h, "blocks counter differs from the walk", 0);
    if (free_blocks != h->count.free_blocks || free_size != h->count.free_size)
        broken(h, "free-block counters differ from the walk", 0);
    if (h->cfg.arena && h->brk != h->start + h->cfg.arena)
        broken(h, "arena heap moved its break", 0);
    if (h->brk > h->committed || h->committed > h->limit)
        broken(h, "break beyond committed memory", 0);
    if (fa_heap_is_slab(h))
        _fa_slab_check(h);
}

/* Debug builds check after every operation while a heap has at most this many blocks; a
 * bigger heap is checked once every `blocks` operations, so the cost stays O(1) per operation
 * on average instead of making every program quadratic. */
#define FA_LAB_DEBUG_FULL_BLOCKS 128

void _fa_classic_heap_debug_check(fa_classic_heap *h)
{
    if (h->count.blocks > FA_LAB_DEBUG_FULL_BLOCKS && ++h->debug_ops < h->count.blocks)
        return;
    h->debug_ops = 0;
    _fa_classic_heap_check(h);
}

/* The lab heap's block format: boundary tags with a 16-byte header and a footer on free blocks.
 *
 *   used block                                  free block
 *   +--------------------------------+          +--------------------------------+
 *   | word 0: size | flags           |          | word 0: size | FREE | flags    |
 *   | word 1: block ^ USED_MAGIC     |          | word 1: FREE_TAG | augment     |
 *   +--------------------------------+ <- p     +--------------------------------+
 *   | payload (size - 16 bytes)      |          | index links (24 bytes)         |
 *   |                                |          | ...                            |
 *   |                                |          | footer: size (last 8 bytes)    |
 *   +--------------------------------+          +--------------------------------+
 *
 * `size` counts the whole block, header included, and is a multiple of 16; every block starts
 * at a multiple of 16, so every payload is 16-byte aligned. Flags live in the low bits:
 *   FREE       this block is free (in the index, footer valid)
 *   PREV_FREE  the block just before is free: its footer sits right before our header, which is
 *              how free() finds the previous neighbour in O(1) without a footer on used blocks
 *   MARK       scratch bit of the invariant checker (never set outside it)
 *
 * Word 1 tells used, free and "freed by another thread, not yet taken back" blocks apart and
 * catches most pointers that are not a block start: a used block holds its own address mixed
 * with a magic number, which user data next to an interior pointer is unlikely to equal. The
 * top 16 bits of word 1 are a tag (addresses and sizes are below 2^48 on x86-64); the address
 * tree keeps its augmented value (largest block in the subtree) in the low 48 bits of a free
 * block's word 1.
 *
 * Word 0 and word 1 are read and written with relaxed atomics: a thread freeing a block of
 * another thread's heap reads and swaps word 1 while the owner may rewrite the PREV_FREE bit
 * of word 0. On x86-64 these are plain moves; they only keep the compiler (and TSan) honest.
 * Footers and index links belong to free blocks, which only the heap's owner touches.
 */
#ifndef FA_LAB_BLOCK_H
#define FA_LAB_BLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "platform/atomic.h"

#define FA_BLOCK_HEADER 16
#define FA_BLOCK_ALIGN 16
/* Smallest block: header, three link words of a tree node, footer. */
#define FA_BLOCK_MIN 48
/* Largest block size we handle (sizes and addresses must fit in 48 bits). */
#define FA_BLOCK_MAX ((size_t)1 << 46)

#define FA_TAG_FREE ((uintptr_t)1)
#define FA_TAG_PREV_FREE ((uintptr_t)2)
#define FA_TAG_MARK ((uintptr_t)4)
#define FA_TAG_FLAGS ((uintptr_t)15)

#define FA_WORD1_TAG_SHIFT 48
#define FA_WORD1_LOW_MASK (((uintptr_t)1 << FA_WORD1_TAG_SHIFT) - 1)
#define FA_USED_MAGIC ((uintptr_t)0x5EEDull << FA_WORD1_TAG_SHIFT)
#define FA_REMOTE_MAGIC ((uintptr_t)0xDEADull << FA_WORD1_TAG_SHIFT)
#define FA_FREE_TAG ((uintptr_t)0xFA11ull << FA_WORD1_TAG_SHIFT)

_Static_assert(FA_BLOCK_MIN % FA_BLOCK_ALIGN == 0, "blocks keep 16-byte alignment");
_Static_assert(FA_BLOCK_HEADER % FA_BLOCK_ALIGN == 0, "payloads keep 16-byte alignment");
_Static_assert(FA_BLOCK_MIN >= FA_BLOCK_HEADER + 3 * sizeof(void *) + sizeof(uintptr_t),
               "a free block holds a tree node and a footer");
_Static_assert(sizeof(uintptr_t) == 8, "the tag layout assumes 64-bit words");

/* Blocks are addressed by the integer address of their header. */
static inline uintptr_t *fa_block_word(uintptr_t block, int i)
{
    return (uintptr_t *)block + i;
}

static inline uintptr_t fa_block_word0(uintptr_t block)
{
    return fa_atomic_load_relaxed(fa_block_word(block, 0));
}

static inline void fa_block_set_word0(uintptr_t block, uintptr_t v)
{
    fa_atomic_store_relaxed(fa_block_word(block, 0), v);
}

static inline uintptr_t fa_block_word1(uintptr_t block)
{
    return fa_atomic_load_relaxed(fa_block_word(block, 1));
}

static inline void fa_block_set_word1(uintptr_t block, uintptr_t v)
{
    fa_atomic_store_relaxed(fa_block_word(block, 1), v);
}

static inline size_t fa_block_size(uintptr_t block)
{
    return fa_block_word0(block) & ~FA_TAG_FLAGS;
}

static inline bool fa_block_is_free(uintptr_t block)
{
    return fa_block_word0(block) & FA_TAG_FREE;
}

static inline bool fa_block_prev_is_free(uintptr_t block)
{
    return fa_block_word0(block) & FA_TAG_PREV_FREE;
}

/* Set the size and the FREE bit, keeping PREV_FREE. */
static inline void fa_block_set_size(uintptr_t block, size_t size, bool free)
{
    uintptr_t keep = fa_block_word0(block) & FA_TAG_PREV_FREE;
    fa_block_set_word0(block, size | keep | (free ? FA_TAG_FREE : 0));
}

static inline void fa_block_set_prev_free(uintptr_t block, bool prev_free)
{
    uintptr_t w = fa_block_word0(block) & ~FA_TAG_PREV_FREE;
    fa_block_set_word0(block, w | (prev_free ? FA_TAG_PREV_FREE : 0));
}

static inline uintptr_t fa_block_used_check(uintptr_t block)
{
    return block ^ FA_USED_MAGIC;
}

static inline uintptr_t fa_block_remote_check(uintptr_t block)
{
    return block ^ FA_REMOTE_MAGIC;
}

/* Free blocks: the footer (last word) repeats the size. */
static inline uintptr_t *fa_block_footer(uintptr_t block, size_t size)
{
    return (uintptr_t *)(block + size) - 1;
}

/* The size of the free block that ends right before `block` (valid only if PREV_FREE). */
static inline size_t fa_block_prev_size(uintptr_t block)
{
    return *((uintptr_t *)block - 1);
}

static inline void *fa_block_payload(uintptr_t block)
{
    return (void *)(block + FA_BLOCK_HEADER);
}

static inline uintptr_t fa_block_of_payload(const void *p)
{
    return (uintptr_t)p - FA_BLOCK_HEADER;
}

/* The block size that serves a request of n bytes; 0 if n is too large. */
static inline size_t fa_block_size_for(size_t n)
{
    if (n > FA_BLOCK_MAX)
        return 0;
    size_t size = (n + FA_BLOCK_HEADER + FA_BLOCK_ALIGN - 1) & ~(size_t)(FA_BLOCK_ALIGN - 1);
    return size < FA_BLOCK_MIN ? FA_BLOCK_MIN : size;
}

/* Augmented value of a free block in the address tree (largest size in its subtree). */
static inline size_t fa_block_augment(uintptr_t block)
{
    return fa_block_word1(block) & FA_WORD1_LOW_MASK;
}

static inline void fa_block_set_augment(uintptr_t block, size_t v)
{
    fa_block_set_word1(block, FA_FREE_TAG | v);
}

#endif

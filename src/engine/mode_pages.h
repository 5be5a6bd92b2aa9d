/* A mode's own pages and large blocks inside the core's segments (common/mode.h: `pages`):
 * secure mode's, with trailers, quarantine and guard pages (engine/secure/). The core marks
 * what such a mode sets up (`by_mode` in a page or a segment) and calls these where its own
 * pages would do otherwise; it tests no mode flag. Only the secure library builds a mode with
 * pages of its own (FA_MODE_PAGES): in the default library the tests of the mark are constant
 * false and their branches compile away. */
#ifndef FA_MODE_PAGES_H
#define FA_MODE_PAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/mode.h"
#include "engine/types.h"

struct fa_mode_pages {
    /* A segment of the mode's, just registered (a cold one may come back as another kind). */
    void (*segment_registered)(fa_segment_t *seg);
    /* The bytes at the end of each page of the mode's segments that hold no block. */
    size_t page_tail;
    /* A page of the mode's segments set up for a class it did not serve before (`reserved`
     * counted, its blocks end at `end`). */
    void (*page_class_changed)(fa_page_t *page, uintptr_t end);
    /* The fewest blocks a page provisions at a time. */
    size_t least_batch;
    /* Provision count blocks from `first` in front of `rest`: the new free list. The page's
     * first batch holds back block 0. */
    fa_block_t *(*new_blocks)(fa_page_t *page, char *first, size_t count, fa_block_t *rest);
    size_t (*usable)(const fa_page_t *page, const void *p, const char *caller);
    /* p is a live block of the page, checked by the core; size: a sized free's (0: none). */
    void (*free)(fa_page_t *page, void *p, const char *caller, size_t size);
    /* realloc of p (a block of page, or seg's large block) to n bytes, where the mode keeps or
     * moves it itself; NULL: the core moves it (malloc, copy, free). */
    void *(*realloc)(fa_segment_t *seg, fa_page_t *page, void *p, size_t n);
    /* The mode's large block of seg about to be freed by caller (size: a sized free's). */
    void (*large_check)(fa_segment_t *seg, const char *caller, size_t size);
    /* seg's large block freed and counted: its mapping is the mode's to keep or unmap. */
    void (*large_release)(fa_segment_t *seg);
    /* The calling thread stops using heap (its quarantine, say). */
    void (*heap_leaving)(fa_heap_t *heap);
};

#ifdef FA_SECURE_BUILD
#define FA_MODE_PAGES 1
#else
#define FA_MODE_PAGES 0
#endif
/* The mode in force's page operations, NULL if it makes no pages (the core, the lab). */
#define fa_mode_pages() (FA_MODE_PAGES ? _fa_mode->pages : NULL)
/* The operations of the mode whose page or segment x is, NULL for the core's own. */
#define fa_mode_pages_of(x) (FA_MODE_PAGES && (x)->by_mode ? _fa_mode->pages : NULL)

#endif

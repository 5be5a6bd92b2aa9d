/* The calling thread's heap, read by the inline fast paths and every slow one, and the empty
 * heap and page that stand in for it until the thread has one (heap.c makes and ends heaps):
 * their slots say NULL, so a thread's first call takes the slow path. */
#include "engine/engine.h"

__thread fa_heap_t *_fa_heap_tls __attribute__((tls_model("initial-exec"))) = &_fa_heap_empty;
fa_page_t _fa_page_empty = {.free = FA_LIST_END, .local = FA_LIST_END};
fa_heap_t _fa_heap_empty = {.direct = {[0 ... FA_DIRECT_SLOTS - 1] = &_fa_page_empty},
                            .bin_page = {[0 ... FA_BINS - 1] = &_fa_page_empty}};

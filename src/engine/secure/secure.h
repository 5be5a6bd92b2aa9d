/* Secure mode (FITALLOC_SECURE): the files of engine/secure/, built only into
 * libfitalloc-secure.so (FA_SECURE_BUILD). The core reaches it through the mode table alone
 * (common/mode.h, engine/mode_pages.h for its pages); these are its files' own prototypes, and
 * the few the upper layers call (process/: init and the exit check; override/: the checked
 * copies and operator new's origin). */
#ifndef FA_SECURE_H
#define FA_SECURE_H

#include "engine/engine.h"

extern bool _fa_secure; /* secure mode is on (the secure library only) */
void *_fa_secure_alloc(size_t n, size_t alignment);
void _fa_secure_free(fa_page_t *page, void *p, const char *caller, size_t size);
size_t _fa_secure_usable(const fa_page_t *page, const void *p, const char *caller);
fa_block_t *_fa_secure_new_blocks(fa_page_t *page, char *first, size_t count, fa_block_t *rest);
void _fa_secure_flush(fa_heap_t *heap); /* a thread's quarantine, at its exit */
void _fa_secure_large_check(fa_segment_t *seg, const char *caller, size_t size);
bool _fa_secure_resize(fa_page_t *page, void *p, size_t n); /* realloc in place */
void *_fa_secure_large_realloc(fa_segment_t *seg, size_t n);
void _fa_secure_large_retire(fa_segment_t *seg); /* instead of unmapping it at once */
bool _fa_secure_is_large(size_t n); /* a request of n bytes gets a mapping of its own */
/* The canary byte after n bytes of a large block (secure_large.c): set, or checked. */
void _fa_secure_canary_set(void *p, size_t len);
bool _fa_secure_canary_intact(const void *p, size_t len);

/* secure_large.c: secure mode's large blocks, between guard pages */
void *_fa_secure_large_alloc(size_t n, size_t alignment, bool zero);
/* In the SIGSEGV handler: report an access to a retired mapping or a live block's guards. */
void _fa_secure_large_fault(uintptr_t address);

/* secure_guard.c: guard pages in secure segments, the report of faults in guards */
void _fa_secure_guard_segment(fa_segment_t *seg); /* when it is registered */
/* Guard pages are made (the kernel's page is FA_OS_PAGE): the SIGSEGV hook installed. */
extern bool _fa_secure_guards;
void _fa_secure_guard_init(void);
/* A page taking another size class than it served before: if big, a guard page at the end of
 * each block, up to `end` (a page taking its former class again has them). */
void _fa_secure_guard_blocks(fa_page_t *page, uintptr_t end);

/* secure_zero.c: malloc(0) in secure mode */
void *_fa_secure_zero_alloc(void); /* NULL when the region is full or cannot be reserved */
bool _fa_secure_zero_owns(const void *p);
void _fa_secure_zero_free(void *p, const char *caller, size_t size);
void *_fa_secure_zero_realloc(void *p, size_t n);
size_t _fa_secure_zero_usable(const void *p);  /* 0 */
void _fa_secure_zero_fault(uintptr_t address); /* reports an access in the region */

/* The size asked for the block at `block` of a secure page, as its size word says (the block's
 * room without the trailer if the word is damaged). */
size_t _fa_secure_request(const fa_page_t *page, uintptr_t block);
/* A fault in the freed big block at `block` of `size` bytes: a double free if this thread was
 * freeing it. */
void _fa_secure_refree_fault(uintptr_t block, size_t size);
void _fa_secure_report_init(void); /* reports print the stack (report_stack.c) */
/* Which form of allocation is making a block: operator new and new[] say so around their call
 * in the secure library (override/operator_new.c); secure mode records it in the block and
 * checks it against the form that frees it. */
enum { FA_ORIGIN_MALLOC, FA_ORIGIN_NEW, FA_ORIGIN_NEW_ARRAY };
extern __thread uint8_t _fa_secure_origin __attribute__((tls_model("initial-exec")));

/* bounds.c: checked copies (secure mode) */
/* A copy of len bytes to dst, made by caller ("memcpy", ...): stop with a report if dst lies in
 * a fitalloc block (from its start to the end of its room) and the copy runs past the bytes the
 * block was asked for. */
void _fa_copy_check(const char *caller, const void *dst, size_t len);

#endif

/* The policy lab (FITALLOC_MODE=lab) as the process sees it: malloc, free and friends of the
 * process-wide lab, configured from the options, and the same as the mode the engine's slow
 * paths hand every call to (common/mode.h). docs/lab.md describes the lab;
 * threads/lab_instance.h its insides. */
#ifndef FA_LAB_H
#define FA_LAB_H

#include <stdbool.h>
#include <stddef.h>

#include "common/mode.h"

/* The functions below as a mode. */
extern const struct fa_mode_ops _fa_lab_mode;

/* Once, at process init when fa_option(mode) == FA_MODE_LAB, after the options are read. Safe
 * before main (no malloc, no stdio); the other entry points also call it if nobody did. */
void _fa_lab_init(void);
/* n bytes, 16-byte aligned; NULL and errno ENOMEM when out of memory; malloc(0) is unique. */
void *_fa_lab_malloc(size_t n);
/* n bytes aligned to alignment (a power of two > 16); NULL and ENOMEM when out of memory. */
void *_fa_lab_aligned(size_t alignment, size_t n);
/* p owned by the lab, n > 0: resize keeping the contents (in place when it can, growing into a
 * free next neighbour); NULL and ENOMEM (p untouched) when out of memory. */
void *_fa_lab_realloc(void *p, size_t n);
/* p non-NULL and owned by the lab; a double free or a bad pointer aborts with a message. */
void _fa_lab_free(void *p, const char *caller);
/* p lies in a lab heap or a lab direct mapping (a range check; a table look-up only when large
 * requests go to the OS). */
bool _fa_lab_owns(const void *p);
size_t _fa_lab_usable_size(const void *p);
/* From the thread-exit hook, for threads that used the lab. */
void _fa_lab_thread_exit(void);
/* pthread_atfork handlers. */
void _fa_lab_fork_prepare(void);
void _fa_lab_fork_parent(void);
void _fa_lab_fork_child(void);
/* The lab report (text lines "  name: value", or one JSON object), at exit under
 * FITALLOC_STATS; also writes the FITALLOC_LAB_HIST file. */
void _fa_lab_stats_print(int fd, bool json);

#endif

/* What one purge pass hands back to the OS, and in which order (the purger, purge.c, runs it);
 * fa_collect, a pass that waits for nothing. */
#include "engine/engine.h"
#include "fitalloc.h"

static void purge_pass(uint64_t now, bool force, long *next)
{
    _fa_heaps_unpark_expired(now, force, next);
    /* Before the segments: a pooled page it releases may empty an abandoned segment. */
    _fa_page_pool_sweep(now, force, next);
    _fa_segments_purge(now, force, next);
    _fa_large_purge(now, force, next);
    _fa_mesh_pass(now, force, next);
}

void _fa_purge_init(void)
{
    _fa_purge_set_pass(purge_pass);
}

FA_API void fa_collect(void)
{
    _fa_guard_flush();
    fa_heap_t *heap = _fa_heap_tls;
    if (heap != &_fa_heap_empty) {
        _fa_heap_settle_sparse(heap, true);
        _fa_heap_take_remote_frees(heap);
        _fa_heap_release_idle_heads(heap, true);
    }
    _fa_purge_run(true);
}

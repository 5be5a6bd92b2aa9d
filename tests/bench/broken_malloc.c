/* broken_malloc: a deliberately wrong allocator for test_workloads.sh (LD_PRELOAD).
 *
 * malloc hands out 64 slots of 1 MiB in turn and free does nothing, so a workload that keeps
 * more than 64 blocks alive is given blocks that share memory. Its own checks (tags, the
 * overlap check) must notice and make it exit non-zero.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#define SLOTS 64
#define SLOT_SIZE (1 << 20)
#define SLOT_ALIGN 4096

static _Alignas(SLOT_ALIGN) unsigned char arena[SLOTS][SLOT_SIZE];
static atomic_uint next_slot;

void *malloc(size_t n)
{
    if (n > SLOT_SIZE) {
        errno = ENOMEM;
        return NULL;
    }
    return arena[atomic_fetch_add(&next_slot, 1) % SLOTS];
}

void free(void *p)
{
    (void)p;
}

void *calloc(size_t count, size_t n)
{
    if (n && count > SLOT_SIZE / n)
        return NULL;
    void *p = malloc(count * n);
    if (p)
        memset(p, 0, count * n);
    return p;
}

void *realloc(void *old, size_t n)
{
    void *p = malloc(n);
    if (p && old)
        memmove(p, old, n); /* stays inside the arena: old is a slot start, n <= SLOT_SIZE */
    return p;
}

int posix_memalign(void **out, size_t align, size_t n)
{
    if (align > SLOT_ALIGN)
        return ENOMEM;
    *out = malloc(n);
    return *out ? 0 : ENOMEM;
}

void *aligned_alloc(size_t align, size_t n)
{
    return align > SLOT_ALIGN ? NULL : malloc(n);
}

void *memalign(size_t align, size_t n)
{
    return aligned_alloc(align, n);
}

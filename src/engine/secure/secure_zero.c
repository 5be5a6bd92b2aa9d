/* Secure mode's malloc(0): a pointer to no memory at all.
 *
 * A request of 0 bytes (with no alignment beyond 16) gets a slot of a region reserved
 * inaccessible at first use (FA_ZERO_SLOTS slots of 16 bytes: one 4 MiB chunk of address
 * space, and no memory): the pointer is unique while the block lives and may be freed, but any
 * read or write through it faults, and the fault is reported as such (secure_guard.c). One bit
 * per slot says it is live: a second free is a double free. Slots are handed out in turn, round the region,
 * so a freed slot comes back only after all the others (a quarantine of 262143 blocks). When
 * every slot is live, malloc(0) is served as a request of one byte would be.
 */
#include "engine/fastpath.h"
#include "engine/secure/secure.h"
#include "platform/atomic.h"

#define FA_ZERO_SLOT 16
#define FA_ZERO_SLOTS ((size_t)1 << 18)
#define FA_ZERO_BYTES (FA_ZERO_SLOTS * FA_ZERO_SLOT)

static uintptr_t region; /* 0 until the first malloc(0); then for good */
static uint64_t live[FA_ZERO_SLOTS / 64] FA_BSS_APART;
static size_t next_slot, live_count;

/* The slot of p in the region, or FA_ZERO_SLOTS if p is not in it. */
static size_t slot_of(uintptr_t p)
{
    uintptr_t r = fa_atomic_load_acquire(&region);
    return r && p - r < FA_ZERO_BYTES ? (p - r) / FA_ZERO_SLOT : FA_ZERO_SLOTS;
}

void *_fa_secure_zero_alloc(void)
{
    void *p = NULL;
    fa_mutex_lock(&_fa_global_lock);
    if (!region) {
        /* A chunk of its own: the segment map says nothing of it (a large block's mapping
         * shorter than a chunk leaves the rest of its chunk to the map entry of its header). */
        void *r = _fa_os_reserve(FA_ZERO_BYTES, FA_SEG_SIZE);
        fa_atomic_store_release(&region, (uintptr_t)r);
    }
    if (region && live_count < FA_ZERO_SLOTS) {
        size_t i = next_slot;
        while (live[i / 64] & (1ull << (i % 64)))
            i = (i + 1) % FA_ZERO_SLOTS;
        live[i / 64] |= 1ull << (i % 64);
        live_count++;
        next_slot = (i + 1) % FA_ZERO_SLOTS;
        p = (void *)(region + i * FA_ZERO_SLOT);
        fa_count(zero_allocs, 1);
    }
    fa_mutex_unlock(&_fa_global_lock);
    return p;
}

bool _fa_secure_zero_owns(const void *p)
{
    return slot_of((uintptr_t)p) < FA_ZERO_SLOTS;
}

void _fa_secure_zero_free(void *p, const char *caller, size_t size)
{
    uintptr_t a = (uintptr_t)p;
    size_t i = slot_of(a);
    FA_ASSERT(i < FA_ZERO_SLOTS);
    if (a % FA_ZERO_SLOT)
        _fa_invalid_pointer(caller, p);
    fa_mutex_lock(&_fa_global_lock);
    bool was_live = live[i / 64] & (1ull << (i % 64));
    live[i / 64] &= ~(1ull << (i % 64));
    live_count -= was_live;
    fa_count(zero_frees, was_live);
    fa_mutex_unlock(&_fa_global_lock);
    if (!was_live)
        _fa_double_free(caller, p, 0);
    if (size)
        _fa_fatal("fitalloc: %s(): size mismatch: %zu bytes given for the 0-byte block at %p\n",
                  caller, size, p);
}

/* realloc of a 0-byte block: nothing to copy. */
void *_fa_secure_zero_realloc(void *p, size_t n)
{
    void *q = fa_malloc_inline(n);
    if (q)
        _fa_secure_zero_free(p, "realloc", 0);
    return q;
}

size_t _fa_secure_zero_usable(const void *p)
{
    (void)p;
    return 0;
}

void _fa_secure_zero_fault(uintptr_t a)
{
    size_t i = slot_of(a);
    if (i < FA_ZERO_SLOTS)
        _fa_fatal("fitalloc: access at %p through the 0-byte block at %p (malloc(0): no byte "
                  "may be read or written)\n",
                  (void *)a, (void *)(region + i * FA_ZERO_SLOT));
}

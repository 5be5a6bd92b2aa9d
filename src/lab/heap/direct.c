/* Direct OS mappings for large lab requests (direct.h). */
#include "lab/heap/direct.h"

#include "common/message.h"
#include "platform/arch.h"
#include "platform/compiler.h"
#include "platform/os.h"
#include "platform/atomic.h"

#define DELETED ((uintptr_t)1)
#define FIRST_CAPACITY 256

static size_t hash(uintptr_t addr, size_t capacity)
{
    /* Mappings are page-aligned: drop the zero bits, then mix (Fibonacci hashing). */
    return (size_t)(((addr >> 12) * 0x9E3779B97F4A7C15ull) >> 20) & (capacity - 1);
}

/* The slot holding addr, or NULL. */
static struct fa_direct_entry *lookup(struct fa_direct_registry *r, uintptr_t addr)
{
    if (!r->table)
        return NULL;
    for (size_t i = hash(addr, r->capacity);; i = (i + 1) & (r->capacity - 1)) {
        if (r->table[i].addr == addr)
            return &r->table[i];
        if (r->table[i].addr == 0)
            return NULL;
    }
}

static void put(struct fa_direct_entry *table, size_t capacity, uintptr_t addr, size_t size)
{
    size_t i = hash(addr, capacity);
    while (table[i].addr > DELETED)
        i = (i + 1) & (capacity - 1);
    table[i].addr = addr;
    table[i].size = size;
}

/* Keep at most half the slots used (deleted ones included), so probes stay short. */
static bool make_room(struct fa_direct_registry *r)
{
    if (r->table && 2 * (r->used + 1) <= r->capacity)
        return true;
    size_t capacity = r->capacity ? r->capacity : FIRST_CAPACITY;
    while (2 * (r->live + 1) > capacity / 2)
        capacity *= 2;
    size_t bytes = fa_align_up(capacity * sizeof(struct fa_direct_entry), FA_OS_PAGE);
    struct fa_direct_entry *table = _fa_os_map_aligned(bytes, FA_OS_PAGE);
    if (!table)
        return false;
    for (size_t i = 0; r->table && i < r->capacity; i++)
        if (r->table[i].addr > DELETED)
            put(table, capacity, r->table[i].addr, r->table[i].size);
    if (r->table)
        _fa_os_unmap(r->table,
                     fa_align_up(r->capacity * sizeof(struct fa_direct_entry), FA_OS_PAGE));
    r->table = table;
    r->capacity = capacity;
    r->used = r->live;
    return true;
}

void *_fa_direct_alloc(struct fa_direct_registry *r, size_t alignment, size_t n)
{
    if (n > ((size_t)1 << 46))
        return NULL;
    size_t size = fa_align_up(n ? n : 1, FA_OS_PAGE);
    void *p = _fa_os_map_aligned(size, alignment > FA_OS_PAGE ? alignment : FA_OS_PAGE);
    if (!p)
        return NULL;
    fa_mutex_lock(&r->lock);
    if (!make_room(r)) {
        fa_mutex_unlock(&r->lock);
        _fa_os_unmap(p, size);
        return NULL;
    }
    put(r->table, r->capacity, (uintptr_t)p, size);
    r->used++;
    fa_atomic_store_relaxed(&r->live, r->live + 1);
    r->allocs++;
    r->bytes += size;
    fa_mutex_unlock(&r->lock);
    return p;
}

bool _fa_direct_free(struct fa_direct_registry *r, void *p)
{
    if (!fa_atomic_load_relaxed(&r->live))
        return false;
    fa_mutex_lock(&r->lock);
    struct fa_direct_entry *e = lookup(r, (uintptr_t)p);
    size_t size = e ? e->size : 0;
    if (e) {
        e->addr = DELETED;
        fa_atomic_store_relaxed(&r->live, r->live - 1);
        r->frees++;
        r->bytes -= size;
    }
    fa_mutex_unlock(&r->lock);
    if (e)
        _fa_os_unmap(p, size);
    return e != NULL;
}

size_t _fa_direct_usable(struct fa_direct_registry *r, const void *p)
{
    if (!fa_atomic_load_relaxed(&r->live))
        return 0;
    fa_mutex_lock(&r->lock);
    struct fa_direct_entry *e = lookup(r, (uintptr_t)p);
    size_t size = e ? e->size : 0;
    fa_mutex_unlock(&r->lock);
    return size;
}

void _fa_direct_destroy(struct fa_direct_registry *r)
{
    for (size_t i = 0; r->table && i < r->capacity; i++)
        if (r->table[i].addr > DELETED)
            _fa_os_unmap((void *)r->table[i].addr, r->table[i].size);
    if (r->table)
        _fa_os_unmap(r->table,
                     fa_align_up(r->capacity * sizeof(struct fa_direct_entry), FA_OS_PAGE));
    r->table = NULL;
    r->capacity = r->used = r->live = 0;
}

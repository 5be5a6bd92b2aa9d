/* The address map (addr_map.h). */
#include "addr_map.h"

#include "replay_mem.h"

#define INITIAL_BITS 12

/* Fibonacci hashing: pointers are 16-byte aligned and clustered, the multiply spreads them. */
static size_t slot_of(const struct addr_map *m, uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> m->shift);
}

static bool allocate(struct addr_map *m, unsigned bits)
{
    struct addr_entry *slots = replay_map(sizeof *slots << bits);
    if (!slots)
        return false;
    m->slots = slots;
    m->mask = ((size_t)1 << bits) - 1;
    m->shift = 64 - bits;
    return true;
}

bool addr_map_init(struct addr_map *m)
{
    m->count = 0;
    return allocate(m, INITIAL_BITS);
}

void addr_map_release(struct addr_map *m)
{
    if (m->slots)
        replay_unmap(m->slots, (m->mask + 1) * sizeof *m->slots);
    m->slots = NULL;
}

struct addr_entry *addr_map_find(const struct addr_map *m, uint64_t key)
{
    for (size_t i = slot_of(m, key);; i = (i + 1) & m->mask) {
        struct addr_entry *e = &m->slots[i];
        if (e->key == key)
            return e;
        if (e->key == 0)
            return NULL;
    }
}

static struct addr_entry *place(struct addr_map *m, uint64_t key)
{
    size_t i = slot_of(m, key);
    while (m->slots[i].key != 0)
        i = (i + 1) & m->mask;
    m->slots[i].key = key;
    return &m->slots[i];
}

static bool grow(struct addr_map *m)
{
    struct addr_map old = *m;
    if (!allocate(m, 64 - old.shift + 1))
        return false;
    for (size_t i = 0; i <= old.mask; i++)
        if (old.slots[i].key)
            *place(m, old.slots[i].key) = old.slots[i];
    addr_map_release(&old);
    return true;
}

struct addr_entry *addr_map_insert(struct addr_map *m, uint64_t key)
{
    if ((m->count + 1) * 2 > m->mask + 1 && !grow(m))
        return NULL;
    m->count++;
    return place(m, key);
}

void addr_map_remove(struct addr_map *m, struct addr_entry *e)
{
    size_t hole = (size_t)(e - m->slots);
    /* Backward shift: move up every later entry of the run that may sit in the hole (its home
     * slot is not cyclically between the hole and its own slot). */
    for (size_t i = (hole + 1) & m->mask; m->slots[i].key != 0; i = (i + 1) & m->mask) {
        size_t home = slot_of(m, m->slots[i].key);
        bool stays = hole <= i ? (hole < home && home <= i) : (hole < home || home <= i);
        if (!stays) {
            m->slots[hole] = m->slots[i];
            hole = i;
        }
    }
    m->slots[hole] = (struct addr_entry){0};
    m->count--;
}

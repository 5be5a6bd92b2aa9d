/* The profiler's two tables: the stacks that allocated sampled blocks, each with its counts
 * (now, and at the latest peak's snapshot), and the sampled blocks still live, by address.
 *
 * Both grow in mappings of their own, never freed, so that a free can look its block up
 * without the lock: a block's entry is written before malloc returns it, and the program's
 * free of it comes after, so the table a free reads (acquire) already holds it; the lock is
 * taken only when the block is found. A grown address table leaves the old one mapped for the
 * frees still reading it; a removed entry leaves no mark behind (the entries after it move
 * back), so the table grows with the live samples only, not with all those ever taken. */
#include <string.h>

#include "profile/profile_internal.h"
#include "platform/atomic.h"
#include "platform/os.h"

fa_mutex_t _fa_profile_lock = FA_MUTEX_INIT;
struct fa_profile_stack *_fa_profile_stacks;

/* ---- memory: bump allocation from mappings of FA_PROFILE_CHUNK bytes ---- */
#define FA_PROFILE_CHUNK ((size_t)1 << 20)
static char *chunk_at, *chunk_end;

void *_fa_profile_take(size_t bytes)
{
    bytes = (bytes + 15) & ~(size_t)15;
    if ((size_t)(chunk_end - chunk_at) < bytes) {
        size_t size = bytes > FA_PROFILE_CHUNK ? bytes : FA_PROFILE_CHUNK;
        char *chunk = _fa_os_map_aligned(size, 4096);
        if (!chunk)
            return NULL;
        chunk_at = chunk;
        chunk_end = chunk + size;
    }
    void *p = chunk_at;
    chunk_at += bytes;
    return p;
}

/* ---- stacks ---- */
/* Hash buckets, from FA_PROFILE_BUCKETS_FIRST doubled as the stacks outnumber them: a fixed
 * table spread by the hash kept 32 KiB resident in a small program. */
#define FA_PROFILE_BUCKETS_FIRST 64
static struct fa_profile_stack **buckets;
static size_t bucket_count, stack_count;

static uint64_t hash_frames(const uintptr_t *frames, size_t depth)
{
    uint64_t h = depth;
    for (size_t i = 0; i < depth; i++)
        h = (h ^ frames[i]) * 0x100000001b3ull + (h >> 29);
    return h;
}

/* Buckets for one more stack: false if none can be had. */
static bool buckets_room(void)
{
    if (buckets && stack_count < bucket_count * 2)
        return true;
    size_t count = buckets ? bucket_count * 2 : FA_PROFILE_BUCKETS_FIRST;
    struct fa_profile_stack **b = _fa_profile_take(count * sizeof *b);
    if (!b)
        return buckets != NULL; /* longer chains, still correct */
    memset(b, 0, count * sizeof *b);
    for (struct fa_profile_stack *s = _fa_profile_stacks; s; s = s->next) {
        s->chain = b[s->hash & (count - 1)];
        b[s->hash & (count - 1)] = s;
    }
    buckets = b;
    bucket_count = count;
    return true;
}

static struct fa_profile_stack *stack_of(const uintptr_t *frames, size_t depth)
{
    if (!buckets_room())
        return NULL;
    uint64_t h = hash_frames(frames, depth);
    struct fa_profile_stack **bucket = &buckets[h & (bucket_count - 1)];
    for (struct fa_profile_stack *s = *bucket; s; s = s->chain)
        if (s->hash == h && s->depth == depth && !memcmp(s->frames, frames, depth * sizeof *frames))
            return s;
    struct fa_profile_stack *s = _fa_profile_take(sizeof *s + depth * sizeof *frames);
    if (!s)
        return NULL;
    s->hash = h;
    s->depth = (uint32_t)depth;
    memcpy(s->frames, frames, depth * sizeof *frames);
    s->chain = *bucket;
    *bucket = s;
    s->next = _fa_profile_stacks;
    _fa_profile_stacks = s;
    stack_count++;
    return s;
}

/* ---- the estimate of live bytes, and the peak's snapshot ---- */
/* The estimate only falls when a sampled block is freed: the first such free after a maximum
 * higher than the last snapshot's by 1/FA_PROFILE_PEAK_STEP copies every stack's counts first,
 * so the peak file holds the highest estimate to that much, for a snapshot per new maximum. */
#define FA_PROFILE_PEAK_STEP 200
static double live_estimate, snapshot_estimate;

/* The weight of a sample of `bytes` (under the lock). A program samples few sizes (its size
 * classes), and each sample's weight is wanted twice, at its record and at its free: the last
 * few are kept, as the exponential costs more than the rest of a record. */
#define FA_PROFILE_WEIGHTS 64
static struct {
    uint64_t bytes, rate;
    double weight;
} weights[FA_PROFILE_WEIGHTS];

static double weight_of(uint64_t bytes)
{
    size_t i = (size_t)((bytes >> 4) * 0x9e3779b97f4a7c15ull >> 58) % FA_PROFILE_WEIGHTS;
    if (weights[i].bytes != bytes || weights[i].rate != _fa_profile_rate) {
        weights[i].bytes = bytes;
        weights[i].rate = _fa_profile_rate;
        weights[i].weight = _fa_profile_weight(bytes);
    }
    return weights[i].weight;
}

static void snapshot(void)
{
    for (struct fa_profile_stack *s = _fa_profile_stacks; s; s = s->next)
        s->peak = s->now;
    snapshot_estimate = live_estimate;
}

void _fa_profile_snapshot_if_higher(void)
{
    if (live_estimate > snapshot_estimate)
        snapshot();
}

/* ---- sampled blocks by address: open addressing, linear probing, 0 empty ---- */
struct slot {
    uintptr_t key;
    struct fa_profile_stack *stack;
    uint64_t bytes, granted;
};
struct table {
    size_t mask, live;
    struct slot slots[];
};
static struct table *table;
/* The first table: 2 KiB of slots, as few sampled blocks live at once in a small program. */
#define FA_PROFILE_SLOTS_FIRST 64

static size_t slot_of(uintptr_t key, size_t mask)
{
    return (size_t)((key >> 4) * 0x9e3779b97f4a7c15ull >> 20) & mask;
}

static struct table *new_table(size_t slots)
{
    struct table *t = _fa_profile_take(sizeof *t + slots * sizeof(struct slot));
    if (t)
        t->mask = slots - 1;
    return t;
}

/* Room for one more key: a table twice the live entries' need when more than half is taken. */
static bool make_room(void)
{
    struct table *old = table;
    if (old && (old->live + 1) * 2 <= old->mask + 1)
        return true;
    size_t slots = FA_PROFILE_SLOTS_FIRST;
    while (old && slots < (old->live + 1) * 4)
        slots *= 2;
    struct table *t = new_table(slots);
    if (!t)
        return false;
    for (size_t i = 0; old && i <= old->mask; i++) {
        struct slot *from = &old->slots[i];
        if (!from->key)
            continue;
        size_t j = slot_of(from->key, t->mask);
        while (t->slots[j].key)
            j = (j + 1) & t->mask;
        t->slots[j] = *from;
        t->live++;
    }
    fa_atomic_store_release(&table, t);
    return true;
}

bool _fa_profile_granted_more;

void _fa_profile_table_record(const void *p, uint64_t bytes, uint64_t granted,
                              const uintptr_t *frames, size_t depth)
{
    fa_mutex_lock(&_fa_profile_lock);
    struct fa_profile_stack *s = stack_of(frames, depth);
    if (s && make_room()) {
        struct table *t = table;
        size_t i = slot_of((uintptr_t)p, t->mask);
        while (t->slots[i].key)
            i = (i + 1) & t->mask;
        t->live++;
        t->slots[i].stack = s;
        t->slots[i].bytes = bytes;
        t->slots[i].granted = granted;
        fa_atomic_store_release(&t->slots[i].key, (uintptr_t)p);
        s->now.live_count++;
        s->now.live_bytes += bytes;
        s->now.live_granted += granted;
        _fa_profile_granted_more |= granted > bytes;
        s->now.alloc_count++;
        s->now.alloc_bytes += bytes;
        live_estimate += weight_of(bytes);
    }
    fa_mutex_unlock(&_fa_profile_lock);
}

/* The slot of key in t, or NULL. */
static struct slot *find(struct table *t, uintptr_t key)
{
    if (!t)
        return NULL;
    for (size_t i = slot_of(key, t->mask);; i = (i + 1) & t->mask) {
        uintptr_t k = fa_atomic_load_acquire(&t->slots[i].key);
        if (k == key)
            return &t->slots[i];
        if (k == 0)
            return NULL;
    }
}

/* Odd while a removal moves entries back (under the lock), bumped again after: a free that
 * looked its block up meanwhile without the lock may have missed it, and looks again with it.
 * An entry moves by a release store of its key after the first bump, so a lookup that read
 * a moved key (acquire) reads the bump too. */
static uint64_t moving;

/* Empty slot i of t, moving back the entries after it that would be cut off from their home
 * slot by the gap (t->live is the caller's). */
static void remove_at(struct table *t, size_t i)
{
    fa_atomic_store_relaxed(&moving, moving + 1);
    for (size_t j = (i + 1) & t->mask;; j = (j + 1) & t->mask) {
        uintptr_t key = t->slots[j].key;
        if (!key)
            break;
        size_t home = slot_of(key, t->mask);
        /* The entry at j stays if its home lies in (i, j], cyclically. */
        if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
            continue;
        t->slots[i].stack = t->slots[j].stack;
        t->slots[i].bytes = t->slots[j].bytes;
        t->slots[i].granted = t->slots[j].granted;
        fa_atomic_store_release(&t->slots[i].key, key);
        i = j;
    }
    fa_atomic_store_release(&t->slots[i].key, (uintptr_t)0);
    fa_atomic_store_release(&moving, moving + 1);
}

bool _fa_profile_forget(const void *p)
{
    uint64_t before = fa_atomic_load_acquire(&moving);
    if (!(before & 1) && !find(fa_atomic_load_acquire(&table), (uintptr_t)p) &&
        fa_atomic_load_acquire(&moving) == before)
        return false;
    fa_mutex_lock(&_fa_profile_lock);
    struct slot *slot = find(table, (uintptr_t)p);
    if (slot) {
        if (live_estimate > snapshot_estimate * (1 + 1.0 / FA_PROFILE_PEAK_STEP))
            snapshot();
        struct fa_profile_stack *s = slot->stack;
        s->now.live_count--;
        s->now.live_bytes -= slot->bytes;
        s->now.live_granted -= slot->granted;
        live_estimate -= weight_of(slot->bytes);
        if (live_estimate < 0)
            live_estimate = 0;
        remove_at(table, (size_t)(slot - table->slots));
        table->live--;
    }
    fa_mutex_unlock(&_fa_profile_lock);
    return slot != NULL;
}

void _fa_profile_tables_reset(void)
{
    for (struct fa_profile_stack *s = _fa_profile_stacks; s; s = s->next)
        s->now = s->peak = (struct fa_profile_counts){0};
    fa_atomic_store_release(&table, NULL);
    live_estimate = snapshot_estimate = 0;
}

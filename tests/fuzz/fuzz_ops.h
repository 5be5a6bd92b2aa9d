/* The input of both fuzz targets (fuzz_fast.c, fuzz_lab.c): a program of calls to the public fa_*
 * API on a table of 64 slots, decoded byte by byte (an input's end reads as zeros).
 *
 * Each op is an op byte, a slot byte, then its arguments: sizes (0, small, around the size classes
 * and pages, medium up to 128 KiB, sometimes large up to 4 MiB, rarely impossible ones),
 * alignments (1 B to 1 MiB, a few larger, invalid ones). Every block is filled with a pattern of
 * its own (a seed per allocation) over the bytes asked for and the last bytes of its usable size,
 * and checked before it is resized or freed (a realloc keeps the prefix). Checked on every call:
 * the result or the errno of the C contract (EINVAL, ENOMEM, posix_memalign leaves errno and *out
 * alone), 16-byte and asked alignment, usable size >= size, no overlap with a live block, calloc
 * zeroes. Any mismatch aborts with a message. Everything is freed at the end of an input.
 */
#ifndef FITALLOC_FUZZ_OPS_H
#define FITALLOC_FUZZ_OPS_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fitalloc-lab.h"
#include "fitalloc.h"

#define FUZZ_SLOTS 64
#define FUZZ_TAIL 64                   /* bytes filled at the end of the usable size */
#define FUZZ_BIG ((size_t)1 << 40)     /* from here sizes and alignments may fail (ENOMEM) */
#define FUZZ_HUGE ((size_t)1 << 60)    /* from here they must */
#define FUZZ_SENTINEL ((void *)0x5eed) /* posix_memalign's *out before the call */

struct fuzz_slot {
    unsigned char *p; /* NULL: empty */
    size_t n;         /* bytes asked for */
    size_t usable;    /* fa_malloc_usable_size(p) when it was filled */
    size_t align;     /* the aligned_alloc alignment (for fa_free_aligned_sized), else 0 */
    uint64_t seed;    /* of the pattern */
};

struct fuzz_state {
    const uint8_t *data;
    size_t size, pos;
    unsigned op;      /* ops done in this input, for the messages */
    uint64_t seeds;   /* allocations made in this input */
    size_t live;      /* slots in use */
    size_t live_size; /* sum of their usable sizes */
    bool fast;        /* the fast engine: also check the size classes' waste */
    bool oom_ok;      /* allocations may fail with ENOMEM (the lab's fixed arena) */
    bool end;         /* everything freed at the end of the input (for after_op) */
    struct fuzz_slot slot[FUZZ_SLOTS];
};

__attribute__((format(printf, 2, 3), noreturn)) static void fuzz_fail(const struct fuzz_state *s,
                                                                      const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "fuzz: op %u (input byte %zu): ", s->op, s->pos);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

/* fitalloc's fatal errors (bad pointer, corrupted heap) restore SIGABRT's default action and
 * raise it; with ASan owning SIGABRT libFuzzer still reports them and saves the input. */
const char *__asan_default_options(void)
{
    return "handle_abort=2";
}

static unsigned take(struct fuzz_state *s)
{
    return s->pos < s->size ? s->data[s->pos++] : 0;
}

static size_t take16(struct fuzz_state *s)
{
    size_t lo = take(s);
    return lo | (size_t)take(s) << 8;
}

/* Block size of the fast engine's class `bin` (src/engine/size_class.h): 16-byte steps to 128 B, then
 * 8 classes per doubling up to 128 KiB. */
static size_t fuzz_class_size(unsigned bin)
{
    bin %= 88;
    if (bin < 8)
        return 16 * (bin + 1);
    size_t b = 7 + (bin - 8) / 8, k = (bin - 8) % 8;
    return ((size_t)1 << b) + (k + 1) * ((size_t)1 << (b - 3));
}

static size_t take_size(struct fuzz_state *s)
{
    static const size_t impossible[] = {SIZE_MAX, SIZE_MAX - 15, (size_t)PTRDIFF_MAX + 1,
                                        FUZZ_HUGE};
    unsigned sel = take(s), kind = sel & 15, hi = sel >> 4;
    if (kind == 0)
        return 0;
    if (kind <= 5) /* small */
        return 1 + take(s);
    if (kind <= 8) /* a size class's block size, or one byte less or more */
        return fuzz_class_size(take(s)) + hi % 3 - 1;
    if (kind <= 10)
        return 1 + take16(s) % (16 << 10);
    if (kind <= 12) /* medium, to 128 KiB */
        return 1 + (take16(s) << 1 | (hi & 1));
    if (kind == 13 && hi < 4) /* large: to 1 MiB, 1 in 4 to 4 MiB */
        return (128 << 10) + 1 + take16(s) * (hi == 0 ? 64 : 14);
    if (kind == 13)
        return 1 + take16(s);
    if (kind == 14) /* around whole pages */
        return 4096 * (1 + take(s) % 40) + hi % 3 - 1;
    return hi == 0 ? impossible[take(s) % 4] : 1 + take(s) % 64;
}

/* Mostly 1 B .. 1 MiB; 1 in 16: invalid ones, very large ones and 2-8 MiB. */
static size_t take_align(struct fuzz_state *s)
{
    static const size_t odd[] = {0,       3,       12,      24,        48,
                                 100,     4097,    3 << 20, SIZE_MAX,  (size_t)1 << 62,
                                 2 << 20, 4 << 20, 8 << 20, FUZZ_HUGE, (1 << 20) + 16,
                                 6};
    unsigned b = take(s);
    return b < 0xF0 ? (size_t)1 << (b % 21) : odd[b - 0xF0];
}

static bool is_pow2(size_t x)
{
    return x && !(x & (x - 1));
}

/* ---- the pattern: 8-byte words of a mix of the seed and the word's index ---- */

/* The loops over block bytes are not the fuzzer's business: without coverage and comparison
 * tracing they run several times faster. */
#define FUZZ_PLAIN __attribute__((no_sanitize("coverage"), noinline))

static inline __attribute__((no_sanitize("coverage"))) uint64_t pattern_word(uint64_t seed,
                                                                             size_t k)
{
    uint64_t x = seed + k * 0x9E3779B97F4A7C15u;
    x = (x ^ (x >> 31)) * 0xBF58476D1CE4E5B9u;
    return x ^ (x >> 29);
}

FUZZ_PLAIN static void fill_range(unsigned char *p, uint64_t seed, size_t from, size_t to)
{
    size_t i = from;
    for (; i < to && i % 8; i++)
        p[i] = (unsigned char)(pattern_word(seed, i / 8) >> (i % 8 * 8));
    for (; i + 8 <= to; i += 8) {
        uint64_t w = pattern_word(seed, i / 8);
        memcpy(p + i, &w, 8);
    }
    for (; i < to; i++)
        p[i] = (unsigned char)(pattern_word(seed, i / 8) >> (i % 8 * 8));
}

/* The first offset in [from, to) that does not hold the pattern, or `to`. */
FUZZ_PLAIN static size_t find_bad(const unsigned char *p, uint64_t seed, size_t from, size_t to)
{
    size_t i = from;
    for (; i < to && i % 8; i++)
        if (p[i] != (unsigned char)(pattern_word(seed, i / 8) >> (i % 8 * 8)))
            return i;
    for (; i + 8 <= to; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        if (w != pattern_word(seed, i / 8))
            break;
    }
    for (; i < to; i++)
        if (p[i] != (unsigned char)(pattern_word(seed, i / 8) >> (i % 8 * 8)))
            return i;
    return to;
}

static void check_range(const struct fuzz_state *s, const struct fuzz_slot *sl, size_t from,
                        size_t to, const char *when)
{
    size_t bad = find_bad(sl->p, sl->seed, from, to);
    if (bad < to)
        fuzz_fail(s, "%s: block %p (size %zu, usable %zu, slot %td) corrupted at offset %zu", when,
                  (void *)sl->p, sl->n, sl->usable, sl - s->slot, bad);
}

FUZZ_PLAIN static size_t first_nonzero(const unsigned char *p, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        if (w)
            break;
    }
    while (i < n && !p[i])
        i++;
    return i;
}

static size_t tail_start(const struct fuzz_slot *sl)
{
    return sl->usable - sl->n > FUZZ_TAIL ? sl->usable - FUZZ_TAIL : sl->n;
}

static void fill(struct fuzz_slot *sl)
{
    fill_range(sl->p, sl->seed, 0, sl->n);
    fill_range(sl->p, sl->seed, tail_start(sl), sl->usable);
}

/* The whole pattern, and the usable size unchanged. */
static void check_slot(const struct fuzz_state *s, const struct fuzz_slot *sl, const char *when)
{
    size_t usable = fa_malloc_usable_size(sl->p);
    if (usable != sl->usable)
        fuzz_fail(s, "%s: usable size of %p changed from %zu to %zu", when, (void *)sl->p,
                  sl->usable, usable);
    check_range(s, sl, 0, sl->n, when);
    check_range(s, sl, tail_start(sl), sl->usable, when);
}

/* The live block that [a, a + usable) overlaps (a zero-size block counts one byte), or NULL. */
FUZZ_PLAIN static const struct fuzz_slot *overlap(const struct fuzz_state *s, uintptr_t a,
                                                  size_t usable)
{
    for (const struct fuzz_slot *o = s->slot; o < s->slot + FUZZ_SLOTS; o++)
        if (o->p && a < (uintptr_t)o->p + o->usable + !o->usable &&
            (uintptr_t)o->p < a + usable + !usable)
            return o;
    return NULL;
}

/* A NULL from `what`(n, align): fine only with an errno that fits and when it may fail. */
static void check_failure(const struct fuzz_state *s, size_t n, size_t align, int err,
                          const char *what)
{
    if (err != ENOMEM)
        fuzz_fail(s, "%s(%zu, align %zu) gave NULL with errno %d, not ENOMEM", what, n, align, err);
    if (!s->oom_ok && n < FUZZ_BIG && align < FUZZ_BIG)
        fuzz_fail(s, "%s(%zu, align %zu) failed (ENOMEM)", what, n, align);
}

/* A new block p of n bytes from `what`, asked with alignment `align` (0: none): check it,
 * fill it, and put it in slot sl (which is empty). */
static void install(struct fuzz_state *s, struct fuzz_slot *sl, void *p, size_t n, size_t align,
                    int err, const char *what)
{
    if (!p) {
        check_failure(s, n, align, err, what);
        return;
    }
    if (n >= FUZZ_HUGE || align >= FUZZ_HUGE)
        fuzz_fail(s, "%s(%zu, align %zu) succeeded: %p", what, n, align, p);
    uintptr_t a = (uintptr_t)p;
    if (a % 16 || (align && a % align))
        fuzz_fail(s, "%s(%zu, align %zu) gave the misaligned %p", what, n, align, p);
    size_t usable = fa_malloc_usable_size(p);
    if (usable < n)
        fuzz_fail(s, "%s(%zu): usable size %zu of %p is too small", what, n, usable, p);
    const struct fuzz_slot *o = overlap(s, a, usable);
    if (o)
        fuzz_fail(s, "%s(%zu) = %p (usable %zu) overlaps the live %p (usable %zu)", what, n, p,
                  usable, (void *)o->p, o->usable);
    *sl = (struct fuzz_slot){p, n, usable, 0, ++s->seeds * 0x2545F4914F6CDD1Du};
    s->live++;
    s->live_size += usable;
    fill(sl);
}

static void forget(struct fuzz_state *s, struct fuzz_slot *sl)
{
    s->live--;
    s->live_size -= sl->usable;
    sl->p = NULL;
}

/* Check and free the block in sl, if any, in one of the three ways. */
static void release(struct fuzz_state *s, struct fuzz_slot *sl, unsigned how)
{
    if (!sl->p)
        return;
    check_slot(s, sl, "before free");
    if (how % 3 == 1)
        fa_free_sized(sl->p, sl->n);
    else if (how % 3 == 2 && sl->align)
        fa_free_aligned_sized(sl->p, sl->align, sl->n);
    else
        fa_free(sl->p);
    forget(s, sl);
}

/* realloc (count 0) or reallocarray (count > 0; SIZE_MAX: a product that overflows). */
static void resize(struct fuzz_state *s, struct fuzz_slot *sl, size_t count)
{
    size_t n = take_size(s), size = count == SIZE_MAX ? 2 + n % 8 : count ? n / count : n;
    size_t total = count == SIZE_MAX ? 0 : count ? count * size : n;
    const char *what = count ? "reallocarray" : "realloc";
    if (sl->p)
        check_slot(s, sl, "before realloc");
    errno = 0;
    void *q = count ? fa_reallocarray(sl->p, count, size) : fa_realloc(sl->p, n);
    int err = errno;
    if (count == SIZE_MAX) { /* NULL and ENOMEM, the block untouched */
        if (q || err != ENOMEM)
            fuzz_fail(s, "%s(%p, %zu, %zu) = %p, errno %d", what, (void *)sl->p, count, size, q,
                      err);
    } else if (!total && sl->p) { /* realloc(p, 0) frees p and gives NULL */
        if (q)
            fuzz_fail(s, "%s(%p, 0) = %p, not NULL", what, (void *)sl->p, q);
        forget(s, sl);
        return;
    } else if (!sl->p) {
        install(s, sl, q, total, 0, err, what);
        return;
    } else if (!q) {
        check_failure(s, total, 0, err, what);
    } else {
        struct fuzz_slot old = *sl;
        old.p = q;
        check_range(s, &old, 0, old.n < total ? old.n : total, "after realloc (the kept prefix)");
        forget(s, sl);
        install(s, sl, q, total, 0, err, what);
        return;
    }
    if (sl->p)
        check_slot(s, sl, "after a failed realloc");
}

/* Tight size classes: a plain malloc or calloc wastes at most an eighth (and 15 bytes) up to
 * 128 KiB, a quarter in the big classes up to 512 KiB. */
static void check_waste(const struct fuzz_state *s, const struct fuzz_slot *sl, const char *what)
{
    size_t n = sl->n;
    size_t limit = n < 16 ? 16 : n + n / 8 + 15;
    /* A heap's first blocks of a class under 1 KiB may come from the power-of-two class above
     * it (record 110: borrowed classes). */
    size_t pow2 = 16;
    while (pow2 < n)
        pow2 *= 2;
    if (n < 1024 && pow2 > limit)
        limit = pow2;
    bool wasteful = n <= (128 << 10)   ? sl->usable > limit
                    : n <= (512 << 10) ? sl->usable > n + n / 4
                                       : false;
    if (s->fast && sl->p && wasteful)
        fuzz_fail(s, "%s(%zu): usable size %zu is not the size class", what, n, sl->usable);
}

static void aligned(struct fuzz_state *s, struct fuzz_slot *sl, unsigned kind)
{
    size_t align = take_align(s), n = take_size(s);
    void *p = NULL;
    errno = 0;
    if (kind == 0) {
        p = fa_aligned_alloc(align, n);
        if (!is_pow2(align)) {
            if (p || errno != EINVAL)
                fuzz_fail(s, "aligned_alloc(%zu, %zu) = %p, errno %d", align, n, p, errno);
            return;
        }
        install(s, sl, p, n, align, errno, "aligned_alloc");
        if (sl->p)
            sl->align = align;
        return;
    }
    if (kind == 1) {
        p = FUZZ_SENTINEL;
        errno = 4242;
        int rc = fa_posix_memalign(&p, align, n);
        if (errno != 4242)
            fuzz_fail(s, "posix_memalign(%zu, %zu) changed errno to %d", align, n, errno);
        bool valid = is_pow2(align) && align % sizeof(void *) == 0;
        if (rc ? p != FUZZ_SENTINEL || rc != (valid ? ENOMEM : EINVAL) : !valid)
            fuzz_fail(s, "posix_memalign(%zu, %zu) = %d, *out %p", align, n, rc, p);
        if (valid)
            install(s, sl, rc ? NULL : p, n, align, rc, "posix_memalign");
        return;
    }
    if (kind == 2) {
        p = fa_memalign(align, n);
        if (align > (size_t)1 << 62) {
            if (p || errno != EINVAL)
                fuzz_fail(s, "memalign(%zu, %zu) = %p, errno %d", align, n, p, errno);
            return;
        }
        if (!is_pow2(align)) /* rounded up, as glibc does */
            align = align ? (size_t)1 << (64 - __builtin_clzl(align)) : 1;
        install(s, sl, p, n, align, errno, "memalign");
        return;
    }
    if (kind == 3) {
        p = fa_valloc(n);
        install(s, sl, p, n, 4096, errno, "valloc");
        return;
    }
    p = fa_pvalloc(n);
    size_t whole = n < FUZZ_HUGE ? (n + 4095) / 4096 * 4096 + (n == 0) * 4096 : n;
    install(s, sl, p, whole, 4096, errno, "pvalloc");
}

static void zeroed(struct fuzz_state *s, struct fuzz_slot *sl)
{
    unsigned c = take(s);
    size_t count = c == 255 ? SIZE_MAX / 4 : c % 9, n = take_size(s);
    size_t each = c == 255 ? 8 : count ? n / count : n;
    errno = 0;
    void *p = fa_calloc(count, each);
    int err = errno;
    if (c == 255) { /* count * each overflows */
        if (p || err != ENOMEM)
            fuzz_fail(s, "calloc(%zu, %zu) = %p, errno %d", count, each, p, err);
        return;
    }
    n = count * each;
    size_t nonzero = p ? first_nonzero(p, n) : n;
    if (nonzero < n)
        fuzz_fail(s, "calloc(%zu, %zu) = %p: byte %zu is not 0", count, each, p, nonzero);
    install(s, sl, p, n, 0, err, "calloc");
    check_waste(s, sl, "calloc");
}

enum fuzz_op {
    OP_MALLOC,
    OP_CALLOC,
    OP_REALLOC,
    OP_REALLOCARRAY,
    OP_ALIGNED,
    OP_FREE,
    OP_CHECK,
    OP_FREE_RUN
};

/* One op: the low 4 bits of its first byte choose it, the high 4 bits are its variant. */
static void fuzz_op(struct fuzz_state *s)
{
    static const unsigned char ops[16] = {OP_MALLOC,  OP_MALLOC,  OP_MALLOC,       OP_CALLOC,
                                          OP_REALLOC, OP_REALLOC, OP_REALLOCARRAY, OP_ALIGNED,
                                          OP_ALIGNED, OP_ALIGNED, OP_FREE,         OP_FREE,
                                          OP_FREE,    OP_CHECK,   OP_CHECK,        OP_FREE_RUN};
    unsigned code = take(s), variant = code >> 4;
    struct fuzz_slot *sl = &s->slot[take(s) % FUZZ_SLOTS];
    switch (ops[code % 16]) {
    case OP_MALLOC: {
        release(s, sl, variant);
        size_t n = take_size(s);
        errno = 0;
        void *p = fa_malloc(n);
        install(s, sl, p, n, 0, errno, "malloc");
        check_waste(s, sl, "malloc");
        break;
    }
    case OP_CALLOC:
        release(s, sl, variant);
        zeroed(s, sl);
        break;
    case OP_REALLOC: resize(s, sl, 0); break;
    case OP_REALLOCARRAY: {
        unsigned c = take(s);
        resize(s, sl, c == 255 ? SIZE_MAX : 1 + c % 8);
        break;
    }
    case OP_ALIGNED: /* 7: aligned_alloc, 8: posix_memalign, 9: all five by variant */
        release(s, sl, variant);
        aligned(s, sl, code % 16 == 9 ? variant % 5 : code % 16 - 7);
        break;
    case OP_FREE: release(s, sl, variant); break;
    case OP_CHECK:
        if (code == 14) /* rarely: give free memory back to the OS */
            fa_collect();
        else if (sl->p)
            check_slot(s, sl, "check");
        break;
    default: /* free a run of slots: pages and neighbours empty together */
        for (size_t i = (size_t)(sl - s->slot), end = i + 1 + variant * 4;
             i < end && i < FUZZ_SLOTS; i++)
            release(s, &s->slot[i], (unsigned)i);
        break;
    }
}

/* Every slot's block freed (each in its own way), and nothing left live: the end of a run. */
static void fuzz_release_all(struct fuzz_state *s)
{
    for (size_t i = 0; i < FUZZ_SLOTS; i++)
        release(s, &s->slot[i], (unsigned)i);
    if (s->live || s->live_size)
        fuzz_fail(s, "%zu blocks (%zu bytes) left after freeing all", s->live, s->live_size);
    s->end = true;
}

/* The lab's heaps checked (fa_lab_check) and its statistics. */
static inline struct fa_lab_stats fuzz_checked_lab_stats(const struct fuzz_state *s)
{
    if (fa_lab_check() != 0)
        fuzz_fail(s, "fa_lab_check() failed: not in lab mode?");
    struct fa_lab_stats st;
    st.size = sizeof st;
    if (fa_lab_stats_get(&st) != 0)
        fuzz_fail(s, "fa_lab_stats_get failed");
    return st;
}

/* Run one input; after_op (may be NULL) is called after every op, and once more when all is
 * freed at the end. */
static void fuzz_run(struct fuzz_state *s, const uint8_t *data, size_t size,
                     void (*after_op)(const struct fuzz_state *))
{
    s->data = data;
    s->size = size;
    s->pos = 0;
    s->seeds = 0;
    s->end = false;
    for (s->op = 0; s->pos < s->size; s->op++) {
        fuzz_op(s);
        if (after_op)
            after_op(s);
    }
    fuzz_release_all(s);
    if (after_op)
        after_op(s);
}

#endif

/* Secure mode (FITALLOC_SECURE=1): what the default mode's checks cannot see, paid for on the
 * slow paths only. Secure pages are slow pages (types.h): never in a heap's direct slots, a
 * thread word of 0 and FA_OWNER_SLOW in their owner word, so every malloc and free of their
 * blocks comes here (the fast paths are the default mode's, unchanged). A block of d bytes
 * (a big block's d leaves out the guard page it ends in: secure_guard.c) serving a request of
 * n bytes:
 *
 *   | program's n bytes ...            | canary (64 bytes at most) | (not checked) | size word |
 *   0                                  n                                           d-8         d
 *
 * - the size word is n (and the form that made the block: malloc, new, new[]) encoded with the
 *   secret and the block's address; the canary follows the request. free checks both (an
 *   overflow), the form against its own, and the size word of the block before (an underflow
 *   crosses it first), when the freeing thread owns the page: only the owner hands blocks out
 *   (a big block has a guard page before it instead);
 * - a freed block's size word says it is freed (FA_WORD_FREED, which is how a second free of
 *   it is seen); its first FA_FILL_SPAN bytes, or all up to the size word if the block is
 *   smaller, are zeroed (the whole block with FITALLOC_SECURE_ZERO), and it waits in its
 *   freeing thread's quarantine (FITALLOC_QUARANTINE bytes; a big block inaccessible past its
 *   first page) with no list link nor free mark in it: freed memory reads as zeros, and any
 *   byte written there is seen. Leaving the quarantine it gets its link and mark (the free
 *   list's), and malloc checks the zeros and the size word before handing it out again: a
 *   write after free is reported;
 * - free lists are built in random order, so where the next block lands cannot be predicted;
 * - free_sized and sized delete must name the size that was asked for.
 * Large blocks get their own mapping, between guard pages, with a canary after the block;
 * malloc(0) gets a slot of an inaccessible region (secure_zero.c).
 */
#include <errno.h>
#include <string.h>

#include "engine/free_list.h"
#include "common/options.h"
#include "engine/mode_pages.h"
#include "engine/secure/secure.h"
#include "engine/size_class.h"
#include "profile/profile.h"
#include "platform/atomic.h"

#define FA_TRAILER 16 /* the caller word and the size word */
/* Every slot keeps its last 32 bytes from the program: the trailer and at least 16 canary bytes
 * before it. A store up to 32 bytes before a block lands there, in the slot before it,
 * whatever that slot holds: in a live block's data it could not be told from the program's own
 * writes. */
#define FA_SLOT_RESERVE (FA_TRAILER + 16)
/* How much of a block the checks cover. An overflow is contiguous, so it crosses the first
 * canary bytes after the request first: FA_CANARY_SPAN of them see it, and the slack of a
 * medium block (up to a quarter of it) is not written on every malloc. A write after free
 * lands anywhere in a small object, mostly near the start of a big one: the fill covers whole
 * blocks up to FA_FILL_WHOLE bytes (the class of a 4 KiB request with its trailer), the first
 * FA_FILL_SPAN bytes after the link and mark of bigger ones, or every block whole with
 * FITALLOC_SECURE_ZERO, whose point is that nothing of the old contents is left. The fill
 * (set_bytes) and its check (all_bytes) cost in proportion to what they cover, and a longer span
 * over every bigger block would touch pages of it the program never does (docs/security.md
 * gives the measurements behind both bounds). So the pages of a large medium block that the
 * program never touches stay untouched (and out of its resident memory). */
#define FA_CANARY_SPAN 64
#define FA_TAIL_SPAN 32
#define FA_FILL_WHOLE 4608
#define FA_FILL_SPAN 1024
#define FA_QUARANTINE_SLOTS 256
/* What a big block counts in the quarantine while inaccessible (protect_held): a quarter of
 * the default FITALLOC_QUARANTINE, so that it holds 4 of them. A page of big blocks serves
 * 2 to 6 (secure_guard.c): one leaving the quarantine is soon handed out again, and a block
 * freed twice with another freed between must still be there at the second free. */
#define FA_BIG_HELD ((size_t)64 << 10)

bool _fa_secure;
static uint8_t canary_byte;
/* What a block's size word is stored XOR with, with the block's address (word_key): the
 * secret, its lowest byte the canary byte. The decoded word's lowest byte is the block's, so
 * the stored one is the canary byte: a store 32 bytes past an 8-byte block lands there, and a
 * random byte of an encoded word would already hold the byte stored once in 256 stores. */
static uintptr_t size_key;
static bool protect_big; /* FITALLOC_SECURE_PROTECT (protect_held) */
/* A freed block is zeroed, as hardened_malloc does: no old contents left to read, and a block
 * handed out again is zero where it was checked. */
#define FA_FILL_BYTE 0
static size_t fill_span;

/* A block in the quarantine and its page (which cannot go away: the block counts as used). */
struct fa_held {
    fa_block_t *block;
    fa_page_t *page;
    uintptr_t freed_by; /* the address free was called from */
};

struct fa_quarantine {
    struct fa_held held[FA_QUARANTINE_SLOTS]; /* a ring, oldest at `first` */
    size_t first, count, bytes;
    uint64_t rng;                /* xorshift state for the random list order */
    size_t limit, limit_holding; /* quarantine_limit's last answer, and for how many holders */
};

static void *secure_malloc_any(size_t n)
{
    return _fa_secure_alloc(n, FA_ALIGN);
}

static void *secure_aligned(size_t alignment, size_t n)
{
    void *p = _fa_secure_alloc(n, alignment);
    /* Aligned blocks do not pass where the core counts a slow page's mallocs (profile_pages.c):
     * the heap profiler counts them here, but for those secure_large.c counts. */
    if (n <= FA_CLASS_MAX)
        fa_profile_count(p, n);
    return p;
}

/* realloc of a secure block: kept while its trailer still fits; a large block that stays large
 * resized in its own mapping; NULL: the core moves it. */
static void *secure_realloc(fa_segment_t *seg, fa_page_t *page, void *p, size_t n)
{
    if (seg->kind != FA_SEG_LARGE)
        return _fa_secure_resize(page, p, n) ? p : NULL;
    if (!_fa_secure_is_large(n))
        return NULL;
    _fa_secure_large_check(seg, "realloc", 0);
    return _fa_secure_large_realloc(seg, n);
}

/* Secure mode's pages (engine/mode_pages.h): each ends in a guard page, and a batch of one
 * would come in address order (new lists are shuffled). */
static const struct fa_mode_pages secure_pages = {
    .segment_registered = _fa_secure_guard_segment,
    .page_tail = FA_OS_PAGE,
    .page_class_changed = _fa_secure_guard_blocks,
    .big_page_far = (size_t)1 << 20,
    .provision = _fa_secure_provision,
    .least_batch = 8,
    .new_blocks = _fa_secure_new_blocks,
    .usable = _fa_secure_usable,
    .free = _fa_secure_free,
    .realloc = secure_realloc,
    .large_check = _fa_secure_large_check,
    .large_release = _fa_secure_large_retire,
    .heap_leaving = _fa_secure_flush,
};

/* Secure mode as the core sees it (common/mode.h): every allocation, its pages, and malloc(0)'s
 * blocks outside the segments (secure_zero.c). */
static const struct fa_mode_ops secure_mode = {
    .malloc = secure_malloc_any,
    .aligned = secure_aligned,
    .large = _fa_secure_large_alloc,
    .owns = _fa_secure_zero_owns,
    .free = _fa_secure_zero_free,
    .realloc = _fa_secure_zero_realloc,
    .usable_size = _fa_secure_zero_usable,
    .stats_print = _fa_stats_print,
    .pages = &secure_pages,
};

const struct fa_mode_ops *_fa_secure_init(void)
{
    /* This is the secure library: preloading it asks for secure mode, FITALLOC_SECURE=0 not. */
    _fa_secure = !fa_option_given(secure) || fa_option(secure) != 0;
    /* Bytes no program writes by accident often: neither 0 nor 0xff, and secret. */
    uint64_t r = _fa_os_random();
    canary_byte = (uint8_t)(0x80 | (r & 0x7e) | 1);
    size_key = (_fa_list_secret & ~(uintptr_t)0xff) | canary_byte;
    fill_span = fa_option(secure_zero) ? SIZE_MAX : FA_FILL_SPAN;
    if (_fa_secure) {
        _fa_secure_guard_init();
        _fa_secure_report_init();
    }
    protect_big = _fa_secure_guards && fa_option(secure_protect);
    return _fa_secure ? &secure_mode : NULL;
}

/* ---- reports ---- */

FA_REPORT static void report(const char *caller, const void *p, const char *what, size_t n)
{
    _fa_fatal("fitalloc: %s(): %s of the %zu-byte block at %p\n", caller, what, n, p);
}

/* ---- the size word and the canary ---- */

/* The size word, decoded, holds from its second byte up the block's state bits (freed, and the
 * form that made it: FA_ORIGIN_*), the request n, and 16 check bits of the caller word before
 * it; its lowest byte is the block address's (the canary byte as stored: size_key) and its top
 * two bytes, which an underflow of the block after it writes first, are zero: any byte written
 * there makes the word invalid. The caller word holds the address the block's malloc (new, ...) was called
 * from, encoded with the secret, as AddressSanitizer's reports say where a block was
 * allocated; its check bits make it the last 8 canary bytes after the request too. The caller
 * word is written only by the page's owner, when it hands the block out: the thread freeing
 * the block keeps the address free was called from in its quarantine (fa_held), so no other
 * thread ever writes it. */
#define FA_WORD_FREED ((uintptr_t)1 << 8)
#define FA_WORD_STATE ((uintptr_t)7 << 8)
#define FA_WORD_ORIGIN_SHIFT 9
#define FA_WORD_SIZE_SHIFT 11
#define FA_WORD_SIZE_BITS 21
#define FA_WORD_CHECK_SHIFT (FA_WORD_SIZE_SHIFT + FA_WORD_SIZE_BITS)
_Static_assert(FA_CLASS_MAX < (size_t)1 << FA_WORD_SIZE_BITS, "a request fits the size bits");

__thread uintptr_t _fa_secure_caller;

static inline uintptr_t word_key(uintptr_t block)
{
    return size_key ^ block;
}

static size_t word_n(uintptr_t decoded)
{
    return decoded >> FA_WORD_SIZE_SHIFT & (((size_t)1 << FA_WORD_SIZE_BITS) - 1);
}

/* The 16 check bits of a caller word as stored. */
static uintptr_t caller_check(uintptr_t stored)
{
    return (stored * 0x9e3779b97f4a7c15ull) >> 48;
}

__thread uint8_t _fa_secure_origin;

static uintptr_t origin_of(uintptr_t decoded)
{
    return decoded >> FA_WORD_ORIGIN_SHIFT & 3;
}

static uintptr_t size_word(uintptr_t block, size_t n, uintptr_t state, uintptr_t stored_caller)
{
    return (caller_check(stored_caller) << FA_WORD_CHECK_SHIFT | n << FA_WORD_SIZE_SHIFT | state |
            (block & 0xff)) ^
           word_key(block);
}

/* The caller word of a block with `room` bytes (as stored: encoded). */
static uintptr_t *caller_word(uintptr_t block, size_t room)
{
    return (uintptr_t *)(block + room - 16);
}

/* The checks read every canary and fill byte: ranges under 16 bytes as two loads of eight or
 * of four that may overlap (under 4 bytes: the first, middle and last), up to 64 as two or
 * four of sixteen; longer ones 64 bytes a step in 16-byte vectors (SSE2 on any x86-64, NEON
 * on aarch64), the differences or-ed into two accumulators kept in registers and tested once
 * at the end, the last 64 bytes read again from the range's end (overlapping) rather than in
 * a tail loop. Not a 32-byte vector type: without AVX the
 * compiler keeps it on the stack, and each step waits for its own store (docs/security.md). */
static inline uint64_t load8(const uint8_t *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

typedef uint64_t fa_vec16 __attribute__((vector_size(16)));

static inline fa_vec16 load16(const uint8_t *p)
{
    fa_vec16 v;
    memcpy(&v, p, 16);
    return v;
}

/* Ranges of 64 bytes and more: out of line, the vector loop. */
static bool all_bytes_long(const uint8_t *p, size_t len, uint64_t pattern)
{
    fa_vec16 pat = {pattern, pattern};
    fa_vec16 a = (load16(p + len - 64) ^ pat) | (load16(p + len - 48) ^ pat);
    fa_vec16 b = (load16(p + len - 32) ^ pat) | (load16(p + len - 16) ^ pat);
    for (size_t i = 0; i + 64 <= len; i += 64) {
        a |= (load16(p + i) ^ pat) | (load16(p + i + 16) ^ pat);
        b |= (load16(p + i + 32) ^ pat) | (load16(p + i + 48) ^ pat);
    }
    a |= b;
    return (a[0] | a[1]) == 0;
}

static inline __attribute__((always_inline)) bool all_bytes(const uint8_t *p, size_t len,
                                                            uint8_t byte)
{
    uint64_t pattern = 0x0101010101010101ull * byte;
    if (len < 4) /* the first, middle and last bytes cover 1 to 3 */
        return len == 0 || ((p[0] ^ byte) | (p[len / 2] ^ byte) | (p[len - 1] ^ byte)) == 0;
    if (len < 8) {
        uint32_t lo, hi;
        memcpy(&lo, p, 4);
        memcpy(&hi, p + len - 4, 4);
        return ((lo ^ (uint32_t)pattern) | (hi ^ (uint32_t)pattern)) == 0;
    }
    if (len < 16)
        return ((load8(p) ^ pattern) | (load8(p + len - 8) ^ pattern)) == 0;
    if (len >= 64)
        return all_bytes_long(p, len, pattern);
    fa_vec16 pat = {pattern, pattern};
    fa_vec16 a = (load16(p) ^ pat) | (load16(p + len - 16) ^ pat);
    if (len > 32)
        a |= (load16(p + 16) ^ pat) | (load16(p + len - 32) ^ pat);
    return (a[0] | a[1]) == 0;
}

void _fa_secure_canary_set(void *p, size_t len)
{
    memset(p, canary_byte, len);
}

bool _fa_secure_canary_intact(const void *p, size_t len)
{
    return all_bytes(p, len, canary_byte);
}

static inline void store8(uint8_t *p, uint64_t w)
{
    memcpy(p, &w, 8);
}

static inline void store16(uint8_t *p, fa_vec16 v)
{
    memcpy(p, &v, 16);
}

/* memset without a call (the library's own memset is the checked one, three jumps away), for
 * the fills and canaries of small blocks: stores from both ends that may overlap, 16-byte
 * vectors from 16 bytes up, 64 bytes a step past 64. The empty asm in the loop keeps the
 * compiler from turning it back into a memset or a `rep stos`, slow to start on a few dozen
 * bytes. Past 256 bytes the C library's memset is as quick, and its call a small part. */
static inline __attribute__((always_inline)) void set_bytes(uint8_t *p, size_t len, uint8_t byte)
{
    uint64_t pattern = 0x0101010101010101ull * byte;
    if (len < 16) {
        if (len >= 8) {
            store8(p, pattern);
            store8(p + len - 8, pattern);
        } else if (len >= 4) {
            memcpy(p, &pattern, 4);
            memcpy(p + len - 4, &pattern, 4);
        } else if (len) {
            p[0] = p[len / 2] = p[len - 1] = byte;
        }
        return;
    }
    fa_vec16 v = {pattern, pattern};
    if (len <= 32) {
        store16(p, v);
        store16(p + len - 16, v);
        return;
    }
    if (len <= 64) {
        store16(p, v);
        store16(p + 16, v);
        store16(p + len - 32, v);
        store16(p + len - 16, v);
        return;
    }
    if (len > 256) {
        memset(p, byte, len);
        return;
    }
    for (size_t i = 0; i + 64 <= len; i += 64) {
        store16(p + i, v);
        store16(p + i + 16, v);
        store16(p + i + 32, v);
        store16(p + i + 48, v);
        __asm__ volatile("" ::: "memory");
    }
    store16(p + len - 64, v);
    store16(p + len - 48, v);
    store16(p + len - 32, v);
    store16(p + len - 16, v);
}

/* A big block (one of a big page: 128 to 512 KiB) ends in a guard page (secure_guard.c), and
 * waits in the quarantine inaccessible past its first page (protect_held). */
static inline bool is_big(const fa_page_t *page)
{
    return page->bin >= FA_MEDIUM_BINS;
}

/* What the checks need of a page's blocks, taken once per call (the page's fields would be
 * read again after every store into a block, which may alias them):
 *   room: the bytes the request and its trailer may use (d in the picture above), all of the
 *     block but a big block's guard page;
 *   fill_end: where the fill of a free block ends (it starts after the link and mark); it
 *     covers a big block's first page at least, the part that stays accessible in the
 *     quarantine;
 *   tail_fill: where the fill of its last FA_TAIL_SPAN bytes before the trailer starts, in a
 *     medium block the fill does not cover whole (room - FA_TRAILER: none). A store before
 *     the block after it lands there, and the check of that block's neighbours reads it; a
 *     big block has a guard page after it instead. */
struct shape {
    size_t room, fill_end, tail_fill;
};

static inline struct shape shape_of(const fa_page_t *page)
{
    size_t d = page->block_size;
    if (fa_likely(d <= FA_FILL_WHOLE)) /* not big, filled whole */
        return (struct shape){d, d - FA_TRAILER, d - FA_TRAILER};
    bool big = is_big(page);
    size_t room = d - (big ? FA_OS_PAGE : 0);
    size_t span = room <= FA_FILL_WHOLE ? SIZE_MAX : fill_span;
    if (big && span < FA_OS_PAGE - sizeof(fa_block_t))
        span = FA_OS_PAGE - sizeof(fa_block_t);
    size_t fill = room - FA_TRAILER - sizeof(fa_block_t);
    size_t fill_end = sizeof(fa_block_t) + (fill < span ? fill : span);
    size_t tail = room - FA_TRAILER - FA_TAIL_SPAN;
    return (struct shape){room, fill_end, !big && fill_end < tail ? tail : room - FA_TRAILER};
}

/* A free block's fill: from its start (the free list writes its link and mark over the first
 * bytes later) to fill_end, and its tail fill. */
static inline __attribute__((always_inline)) void fill_set(uintptr_t b, struct shape shape)
{
    set_bytes((uint8_t *)b, shape.fill_end, FA_FILL_BYTE);
    if (shape.tail_fill < shape.room - FA_TRAILER)
        set_bytes((uint8_t *)b + shape.tail_fill, FA_TAIL_SPAN, FA_FILL_BYTE);
}

/* The canary after a request of n bytes in a block of d: every byte from n to the trailer when
 * they are FA_CANARY_SPAN + FA_TAIL_SPAN or fewer, as one range; else the first FA_CANARY_SPAN
 * of them and the last FA_TAIL_SPAN (an underflow of the next block crosses those first: a
 * store 32 bytes before a block lands there, not in the slack no one checks). */
static inline bool canary_split(size_t n, size_t d)
{
    return d - FA_TRAILER - n > FA_CANARY_SPAN + FA_TAIL_SPAN;
}

static inline __attribute__((always_inline)) void canaries_set(uintptr_t b, size_t n, size_t d)
{
    size_t end = d - FA_TRAILER;
    if (!canary_split(n, d)) {
        set_bytes((uint8_t *)b + n, end - n, canary_byte);
        return;
    }
    set_bytes((uint8_t *)b + n, FA_CANARY_SPAN, canary_byte);
    set_bytes((uint8_t *)b + end - FA_TAIL_SPAN, FA_TAIL_SPAN, canary_byte);
}

static inline __attribute__((always_inline)) bool canaries_intact(uintptr_t b, size_t n, size_t d)
{
    size_t end = d - FA_TRAILER;
    if (!canary_split(n, d))
        return all_bytes((const uint8_t *)b + n, end - n, canary_byte);
    return all_bytes((const uint8_t *)b + n, FA_CANARY_SPAN, canary_byte) &&
           all_bytes((const uint8_t *)b + end - FA_TAIL_SPAN, FA_TAIL_SPAN, canary_byte);
}

/* A decoded size word is valid: the block's lowest address byte in its own, the check bits of
 * its caller word, nothing above them (the word's top 32 bits compared with the 16 check bits
 * test both at once), a size the block holds and a form. */
static inline __attribute__((always_inline)) bool word_valid(uintptr_t w, uintptr_t block,
                                                             size_t room)
{
    return (uint8_t)(w ^ block) == 0 &&
           (w >> FA_WORD_CHECK_SHIFT) == caller_check(*caller_word(block, room)) &&
           word_n(w) <= room - FA_TRAILER && origin_of(w) <= FA_ORIGIN_NEW_ARRAY;
}

/* The request size and state a size word records, or SIZE_MAX if the word is damaged. */
static inline __attribute__((always_inline)) uintptr_t word_decoded(uintptr_t block, size_t room)
{
    /* Atomic: the thread that frees a block writes its word while the page's owner may be
     * reading it, in the underflow check of the block after it (either value is valid). */
    uintptr_t w = fa_atomic_load_relaxed((const uintptr_t *)(block + room - 8)) ^ word_key(block);
    return word_valid(w, block, room) ? w : SIZE_MAX;
}

/* The request size a size word records, freed or not, or SIZE_MAX if the word is damaged. */
static inline __attribute__((always_inline)) size_t word_size(uintptr_t block, size_t room)
{
    uintptr_t w = word_decoded(block, room);
    return w == SIZE_MAX ? w : word_n(w);
}

/* A block freed and not handed out again since (in the quarantine or a free list). */
static bool word_freed(uintptr_t block, size_t room)
{
    uintptr_t w = word_decoded(block, room);
    return w != SIZE_MAX && (w & FA_WORD_FREED);
}

/* The size the size word says, for a report: the block's room if the word is damaged too. */
static size_t claimed_size(const fa_page_t *page, uintptr_t block)
{
    size_t room = shape_of(page).room;
    size_t n = word_size(block, room);
    return n != SIZE_MAX ? n : room - FA_TRAILER;
}

size_t _fa_secure_request(const fa_page_t *page, uintptr_t block)
{
    return word_freed(block, shape_of(page).room) ? 0 : claimed_size(page, block);
}

/* The block whose size word this thread is reading for a free, realloc or
 * malloc_usable_size: a big block freed already waits in a quarantine inaccessible past its
 * first page, and reading its size word faults; the fault's report (secure_guard.c) names
 * this call's misuse then, a double free, not a read after free. */
static __thread struct {
    uintptr_t block;
    const char *caller;
} reading __attribute__((tls_model("initial-exec")));

void _fa_secure_refree_fault(uintptr_t block, size_t size)
{
    if (reading.block == block)
        _fa_double_free(reading.caller, (void *)block, size);
}

/* The form of allocation whose release `caller` is: "operator delete" or "operator
 * delete[]", or a C function (free, realloc, ...: none of them starts with an 'o'). */
static uintptr_t release_origin(const char *caller)
{
    if (caller[0] != 'o')
        return FA_ORIGIN_MALLOC;
    return caller[sizeof "operator delete" - 1] == '[' ? FA_ORIGIN_NEW_ARRAY : FA_ORIGIN_NEW;
}

FA_REPORT static void report_mismatch(const char *caller, const void *p, size_t n, uintptr_t origin)
{
    static const char *const made_by[] = {"malloc", "operator new", "operator new[]"};
    _fa_fatal("fitalloc: %s(): alloc-dealloc mismatch: the %zu-byte block at %p was made by %s\n",
              caller, n, p, made_by[origin]);
}

/* For a report on the block: where it was allocated (its caller word, if its size word is
 * valid) and, if it is freed and in this thread's quarantine, where it was freed. */
static void tell_callers(uintptr_t block, size_t room, bool freed)
{
    uintptr_t w = fa_atomic_load_relaxed((const uintptr_t *)(block + room - 8)) ^ word_key(block);
    uintptr_t allocated_by =
        word_valid(w, block, room) ? *caller_word(block, room) ^ _fa_list_secret : 0;
    uintptr_t freed_by = 0;
    fa_heap_t *heap = _fa_heap_tls;
    struct fa_quarantine *q = freed && heap != &_fa_heap_empty ? heap->quarantine : NULL;
    for (size_t i = 0; q && i < q->count; i++) {
        const struct fa_held *held = &q->held[(q->first + i) % FA_QUARANTINE_SLOTS];
        if ((uintptr_t)held->block == block)
            freed_by = held->freed_by;
    }
    _fa_secure_report_callers(allocated_by, freed_by);
}

/* A live block's decoded size word (its request and state), or SIZE_MAX if its trailer (size
 * word, canary) is damaged; a freed one is reported as freed again by `caller`. */
static inline __attribute__((always_inline)) uintptr_t recorded_word(const char *caller,
                                                                     uintptr_t block, size_t room)
{
    reading.block = block;
    reading.caller = caller;
    /* The fault handler runs on this thread: the compiler must keep these stores around the
     * read, which it sees touching neither. */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    uintptr_t w = word_decoded(block, room);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    reading.block = 0;
    if (w == SIZE_MAX)
        return w;
    size_t n = word_n(w);
    if (w & FA_WORD_FREED) {
        tell_callers(block, room, true);
        _fa_double_free(caller, (void *)block, n);
    }
    return canaries_intact(block, n, room) ? w : SIZE_MAX;
}

size_t _fa_secure_usable(const fa_page_t *page, const void *p, const char *caller)
{
    if (_fa_block_is_free(page, p))
        _fa_double_free(caller, p, claimed_size(page, (uintptr_t)p));
    uintptr_t w = recorded_word(caller, (uintptr_t)p, shape_of(page).room);
    size_t n = w == SIZE_MAX ? w : word_n(w);
    if (n == SIZE_MAX)
        report(caller, p, "heap overflow", claimed_size(page, (uintptr_t)p));
    return n;
}

/* A free block's fill is zeros from a 16-byte boundary (a block's start, after its link and
 * mark, its tail fill) for a multiple of 16 bytes: every class, span and trailer is one. Read
 * as aligned vectors or-ed together, which x86-64 folds into the or's own operand (SSE2 cannot
 * for an unaligned load), with no pattern to compare with: 9 instructions per 64 bytes where
 * all_bytes_long takes 17. Short ranges inline, the loop out of line. */
_Static_assert(FA_ALIGN == 16 && FA_TRAILER % 16 == 0 && FA_TAIL_SPAN % 16 == 0 &&
                   FA_FILL_SPAN % 16 == 0 && FA_OS_PAGE % 16 == 0 && sizeof(fa_block_t) == 16,
               "fills start and end on 16-byte boundaries");

/* An aligned load of 16 bytes, whatever the program stored there. */
typedef uint64_t fa_vec16_any __attribute__((vector_size(16), may_alias));

static bool zeros_long(const fa_vec16_any *v, size_t k)
{
    fa_vec16_any a = v[k - 4] | v[k - 3], b = v[k - 2] | v[k - 1];
    for (size_t i = 0; i + 4 <= k; i += 4) {
        a |= v[i] | v[i + 1];
        b |= v[i + 2] | v[i + 3];
    }
    a |= b;
    return (a[0] | a[1]) == 0;
}

static inline __attribute__((always_inline)) bool zeros(uintptr_t from, size_t len)
{
    FA_ASSERT(from % 16 == 0 && len % 16 == 0);
    const fa_vec16_any *v = (const fa_vec16_any *)from;
    size_t k = len / 16;
    if (k >= 4)
        return zeros_long(v, k);
    if (k == 0)
        return true;
    fa_vec16_any a = v[0] | v[k / 2] | v[k - 1]; /* the first, middle and last cover 1 to 3 */
    return (a[0] | a[1]) == 0;
}

/* A free block's fill, after its link and mark up to `to`, holds the fill byte. */
static inline __attribute__((always_inline)) bool fill_intact(uintptr_t block, size_t to)
{
    _Static_assert(FA_FILL_BYTE == 0, "the fill is zeros");
    return zeros(block + sizeof(fa_block_t), to - sizeof(fa_block_t));
}

/* A free block: its fill, its tail fill, and a size word that is still valid. */
static inline __attribute__((always_inline)) bool free_block_intact(uintptr_t block,
                                                                    struct shape shape)
{
    return word_size(block, shape.room) != SIZE_MAX && fill_intact(block, shape.fill_end) &&
           (shape.tail_fill == shape.room - FA_TRAILER ||
            zeros(block + shape.tail_fill, FA_TAIL_SPAN));
}

/* ---- the neighbours of a block being freed ---- */

/* The bytes of x that are neither 0 nor the canary byte, as bits set: the canary byte has its
 * top bit set, so a byte is valid iff it is the canary byte where its top bit is set, 0 where
 * not (one pass over a range that holds both, as a live block another thread is freeing does:
 * its canaries are zeroed). */
static inline uint64_t not_canary_or_zero(uint64_t x, uint64_t pattern)
{
    uint64_t top = x >> 7 & 0x0101010101010101ull;
    return x ^ (top * 0xff & pattern);
}

/* Every byte is the canary byte or zero: 8 bytes a step, the last word read again from the
 * range's end (overlapping), a shorter range as two overlapping halves. */
static bool canary_or_zero(const uint8_t *p, size_t len)
{
    uint64_t pattern = 0x0101010101010101ull * canary_byte;
    uint64_t x;
    if (len >= 8) {
        uint64_t bad = not_canary_or_zero(load8(p + len - 8), pattern);
        for (size_t i = 0; i + 8 < len; i += 8)
            bad |= not_canary_or_zero(load8(p + i), pattern);
        return bad == 0;
    }
    if (len >= 4) {
        uint32_t lo, hi;
        memcpy(&lo, p, 4);
        memcpy(&hi, p + len - 4, 4);
        x = (uint64_t)hi << 32 | lo;
    } else if (len >= 2) {
        uint16_t lo, hi;
        memcpy(&lo, p, 2);
        memcpy(&hi, p + len - 2, 2);
        x = (uint64_t)hi << 16 | lo;
    } else {
        x = len ? p[0] : 0;
    }
    return not_canary_or_zero(x, pattern) == 0;
}

/* What the check of a block's neighbours needs of its page, read once (the acquire loads of
 * the slots' size words would make the compiler read the page's fields again after each). */
struct page_snapshot {
    uintptr_t start, mark, secret;
    uint64_t magic, limit;
    struct shape shape;
};

/* A link or free mark a free slot may hold: 0 (in a quarantine, or being listed by another
 * thread), a link to the end or to a block of the page, the page's mark, or for a slot never
 * handed out (a size word of 0 bytes) the canary of a live 0-byte block. */
static inline __attribute__((always_inline)) bool
free_head_valid(const struct page_snapshot *pg, uintptr_t link, uintptr_t mark, bool fresh)
{
    if ((link | mark) == 0) /* in a quarantine */
        return true;
    uintptr_t pattern = 0x0101010101010101ull * canary_byte;
    uintptr_t next = link ^ pg->secret;
    bool link_ok = link == 0 || next == (uintptr_t)FA_LIST_END ||
                   (next - pg->start) * pg->magic < pg->limit || (fresh && link == pattern);
    return link_ok && (mark == 0 || mark == pg->mark || (fresh && mark == pattern));
}

/* The bytes of [from, to) that also lie in [lo, hi), as canary or zero: read as all canary
 * first, in vectors, as a live block's window is; only one that is not (its block being freed
 * by another thread: zeros and canary bytes) is read again, 8 bytes a step. */
static inline __attribute__((always_inline)) bool
window_canary_or_zero(uintptr_t s, size_t lo, size_t hi, size_t from, size_t to)
{
    lo = lo > from ? lo : from;
    hi = hi < to ? hi : to;
    return lo >= hi || all_bytes((const uint8_t *)s + lo, hi - lo, canary_byte) ||
           canary_or_zero((const uint8_t *)s + lo, hi - lo);
}

/* The bytes of a free slot's fill [lo, hi) that also lie in [from, to): zero, or for a slot
 * never handed out (which may be a live 0-byte block) canary or zero. */
static inline __attribute__((always_inline)) bool
fill_window_intact(uintptr_t s, size_t lo, size_t hi, size_t from, size_t to, bool fresh)
{
    lo = lo > from ? lo : from;
    hi = hi < to ? hi : to;
    if (lo >= hi)
        return true;
    return fresh ? canary_or_zero((const uint8_t *)s + lo, hi - lo)
                 : all_bytes((const uint8_t *)s + lo, hi - lo, FA_FILL_BYTE);
}

/* The bytes in [from, to) of the slot at s, next to a block being freed by the page's owner,
 * where a write running off that block lands first (the slot before: its end; the slot after:
 * its start), are as the slot's size word w says: a live block's canaries, or a free slot's
 * link, mark and fill. Other threads may free its block meanwhile (fill, then the word with
 * release: a freed word is read with its fill whole) or list it (link and mark): the states
 * they pass through are accepted (and slot_check lets a slot whose word changed pass). */
static inline __attribute__((always_inline)) bool
slot_intact(const struct page_snapshot *pg, uintptr_t s, uintptr_t w, size_t from, size_t to)
{
    size_t room = pg->shape.room;
    if (!word_valid(w, s, room))
        return false;
    size_t n = word_n(w);
    if (n && !(w & FA_WORD_FREED)) {
        size_t end = room - FA_TRAILER;
        if (!canary_split(n, room))
            return window_canary_or_zero(s, n, end, from, to);
        return window_canary_or_zero(s, n, n + FA_CANARY_SPAN, from, to) &&
               window_canary_or_zero(s, end - FA_TAIL_SPAN, end, from, to);
    }
    const uintptr_t *head = (const uintptr_t *)s;
    bool fresh = !(w & FA_WORD_FREED);
    if (from < sizeof(fa_block_t) && !free_head_valid(pg, fa_atomic_load_relaxed(&head[0]),
                                                      fa_atomic_load_relaxed(&head[1]), fresh))
        return false;
    return fill_window_intact(s, sizeof(fa_block_t), pg->shape.fill_end, from, to, fresh) &&
           fill_window_intact(s, pg->shape.tail_fill, room - FA_TRAILER, from, to, fresh);
}

/* A damaged slot next to a block being freed: one freed (its word valid, saying so) was
 * written after its free, any other one by an overflow or underflow of the block. */
enum slot_state { SLOT_INTACT, SLOT_DAMAGED, SLOT_WRITTEN_AFTER_FREE };

/* The slot at s did not read as intact with the size word w: what it is. */
static FA_COLD enum slot_state slot_damage(uintptr_t s, size_t room, uintptr_t w)
{
    /* Its state changed while it was read (another thread freed it, or listed it once out of
     * its quarantine: a link and mark over the first bytes of a block read as live): the
     * damage seen is that thread's writes. */
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if ((fa_atomic_load_acquire((const uintptr_t *)(s + room - 8)) ^ word_key(s)) != w)
        return SLOT_INTACT;
    return word_valid(w, s, room) && (w & FA_WORD_FREED) ? SLOT_WRITTEN_AFTER_FREE : SLOT_DAMAGED;
}

static inline __attribute__((always_inline)) enum slot_state
slot_check(const struct page_snapshot *pg, uintptr_t s, size_t from, size_t to)
{
    uintptr_t w = fa_atomic_load_acquire((const uintptr_t *)(s + pg->shape.room - 8)) ^ word_key(s);
    if (fa_likely(slot_intact(pg, s, w, from, to)))
        return SLOT_INTACT;
    return slot_damage(s, pg->shape.room, w);
}

/* Report the damage check_neighbours found. */
FA_REPORT static void report_neighbours(const fa_page_t *page, uintptr_t b, size_t room,
                                        enum slot_state before, enum slot_state after,
                                        const char *caller, size_t n)
{
    size_t d = page->block_size;
    if (before == SLOT_WRITTEN_AFTER_FREE || after == SLOT_WRITTEN_AFTER_FREE) {
        uintptr_t s = before == SLOT_WRITTEN_AFTER_FREE ? b - d : b + d;
        tell_callers(s, room, true);
        report(caller, (void *)s, "write after free", claimed_size(page, s));
    }
    tell_callers(b, room, false);
    if (before != SLOT_INTACT)
        report(caller, (void *)b, "heap underflow (into the block before it)", n);
    report(caller, (void *)b, "heap overflow (into the block after it)", n);
}

/* An overflow that jumps a block's own canaries lands in the slot after it, an underflow in
 * the slot before (its tail canary, then its size word): both are checked at the free, by the
 * page's owner (only the owner hands blocks out, and writes `limit`). */
static inline __attribute__((always_inline)) void check_neighbours(const fa_page_t *page,
                                                                   uintptr_t b, struct shape shape,
                                                                   const char *caller, size_t n)
{
    struct page_snapshot pg = {page->start, fa_page_mark(page), _fa_list_secret,
                               page->magic, page->limit,        shape};
    size_t d = page->block_size;
    /* The last FA_CANARY_SPAN bytes before the slot's size word, its first as many. */
    size_t end = shape.room - 8, near = end > FA_CANARY_SPAN ? end - FA_CANARY_SPAN : 0;
    enum slot_state before = b != pg.start ? slot_check(&pg, b - d, near, end) : SLOT_INTACT;
    /* The slot after the last one provisioned is zero in a page taken clean. */
    uintptr_t a = b + d;
    enum slot_state after =
        (a - pg.start) * pg.magic < pg.limit ? slot_check(&pg, a, 0, FA_CANARY_SPAN)
        : page->fresh && a < pg.start + (uintptr_t)page->reserved * d &&
                !all_bytes((const uint8_t *)a, FA_CANARY_SPAN < end ? FA_CANARY_SPAN : end, 0)
            ? SLOT_DAMAGED
            : SLOT_INTACT;
    if (fa_unlikely((before | after) != SLOT_INTACT))
        report_neighbours(page, b, shape.room, before, after, caller, n);
}

/* ---- allocation ---- */

static struct fa_quarantine *quarantine_of(fa_heap_t *heap);

/* The heap's xorshift state lives with its quarantine, made here if the thread has freed
 * nothing yet (a system call for each batch of new blocks took a third of the time of a
 * program building a large tree before its first free). */
static uint64_t next_random(fa_heap_t *heap)
{
    struct fa_quarantine *q = heap != &_fa_heap_empty ? quarantine_of(heap) : NULL;
    uint64_t x = q ? q->rng : _fa_os_random() | 1;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    if (q)
        q->rng = x;
    return x;
}

/* New blocks of a secure page: free blocks (the fill, a size word for 0 bytes), linked in
 * random order (extend). */
fa_block_t *_fa_secure_new_blocks(fa_page_t *page, char *first, size_t count, fa_block_t *rest)
{
    size_t d = page->block_size;
    struct shape shape = shape_of(page);
    for (size_t i = 0; i < count; i++) {
        uintptr_t b = (uintptr_t)first + i * d;
        fill_set(b, shape);
        *caller_word(b, shape.room) = 0;
        *(uintptr_t *)(b + shape.room - 8) = size_word(b, 0, 0, 0);
    }
    /* The page's first block is never handed out: its trailer guards the second block's
     * start, so an underflow of any block is seen whatever the random order put first. */
    size_t from = (uintptr_t)first == page->start;
    size_t k = count - from;
    uint16_t order[FA_EXTEND_MAX_BLOCKS];
    for (size_t i = 0; i < k; i++)
        order[i] = (uint16_t)(from + i);
    fa_heap_t *heap = _fa_heap_tls;
    for (size_t i = k; i > 1; i--) { /* Fisher-Yates */
        size_t j = next_random(heap) % i;
        uint16_t t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    fa_block_t *list = rest;
    for (size_t i = 0; i < k; i++) {
        fa_block_t *b = (fa_block_t *)(first + (size_t)order[i] * d);
        b->link = fa_link_encode(list);
        b->mark = fa_page_mark(page);
        list = b;
    }
    return list;
}

static void *secure_malloc(fa_heap_t *heap, size_t n, size_t bin)
{
    /* The queue's head while its list lasts, as the default mode's fast path pops from it; the
     * heap's upkeep and the search for another page when it runs out. */
    fa_page_t *page = heap->queues[bin].head;
    if (!page || page->free == FA_LIST_END)
        page = _fa_heap_find_page(heap, bin);
    if (!page)
        return NULL;
    /* A page set up before secure mode began (options read late, the page adopted) serves
     * its blocks as it always did. */
    if (!page->by_mode)
        return fa_page_pop(page);
    if (!fa_link_usable(page->free))
        _fa_free_list_corrupt(page, "free list");
    struct shape shape = shape_of(page);
    if (!free_block_intact((uintptr_t)page->free, shape))
        report("malloc", page->free, "write after free", shape.room - FA_TRAILER);
    fa_block_t *block = fa_page_pop(page);
    uintptr_t b = (uintptr_t)block;
    size_t d = shape.room;
    /* The next malloc of this class reads the next free block's size word and fill: fetch its
     * first and last lines now (blocks freed long ago are out of the cache, and malloc waited
     * on those reads; a prefetch never faults, so the list's end is harmless here). */
    uintptr_t next = (uintptr_t)page->free;
    __builtin_prefetch((const void *)next);
    __builtin_prefetch((const void *)(next + d - 8));
    block->link = block->mark = 0; /* no encoded link shown to the program */
    canaries_set(b, n, d);
    uintptr_t stored = _fa_secure_caller ^ _fa_list_secret;
    *caller_word(b, d) = stored;
    *(uintptr_t *)(b + d - 8) =
        size_word(b, n, (uintptr_t)_fa_secure_origin << FA_WORD_ORIGIN_SHIFT, stored);
    return block;
}

/* realloc in place: a new request that still leaves room for the trailer gets a new one. */
bool _fa_secure_resize(fa_page_t *page, void *p, size_t n)
{
    size_t d = shape_of(page).room;
    if (n > d - FA_SLOT_RESERVE)
        return false;
    uintptr_t b = (uintptr_t)p;
    uintptr_t origin = origin_of(word_decoded(b, d)); /* checked by the caller */
    canaries_set(b, n, d);
    *(uintptr_t *)(b + d - 8) = size_word(b, n, origin << FA_WORD_ORIGIN_SHIFT, *caller_word(b, d));
    return true;
}

/* The size class a secure request of n bytes aligned to `alignment` is served from; FA_BINS if
 * it is a large block. */
static inline __attribute__((always_inline)) size_t secure_bin(size_t n, size_t alignment)
{
    /* The request and the slot's reserve, which also keeps a free block's link and mark off
     * its trailer; `n > max` below catches a sum that wraps. */
    size_t need = n + FA_SLOT_RESERVE;
    if (need < alignment)
        need = alignment;
    /* Big blocks are only 16-byte aligned (types.h): aligned requests stop at the medium
     * classes. */
    size_t max = alignment > FA_ALIGN ? FA_MEDIUM_MAX : FA_CLASS_MAX;
    if (n > max || need > max)
        return FA_BINS;
    size_t bin = fa_bin_of(need);
    if (bin >= FA_MEDIUM_BINS) { /* a big block ends in a guard page (shape_of) */
        need += FA_OS_PAGE;
        if (need > max)
            return FA_BINS;
        bin = fa_bin_of(need);
    }
    /* Every class is a multiple of FA_ALIGN: no division for the usual alignment. */
    while (alignment > FA_ALIGN && bin < FA_BINS && fa_bin_size(bin) % alignment)
        bin++;
    return bin;
}

bool _fa_secure_is_large(size_t n)
{
    return secure_bin(n, FA_ALIGN) == FA_BINS;
}

void *_fa_secure_alloc(size_t n, size_t alignment)
{
    if (n == 0 && alignment <= FA_ALIGN) {
        void *p = _fa_secure_zero_alloc();
        if (p)
            return p;
    }
    size_t bin = secure_bin(n, alignment);
    if (bin == FA_BINS)
        return _fa_secure_large_alloc(n, alignment, false);
    fa_heap_t *heap = _fa_heap_tls;
    if (heap == &_fa_heap_empty)
        heap = _fa_heap_init_thread();
    void *p = heap ? secure_malloc(heap, n, bin) : NULL;
    if (!p)
        errno = ENOMEM;
    return p;
}

/* ---- free and the quarantine ---- */

static struct fa_quarantine *quarantine_of(fa_heap_t *heap)
{
    if (!heap->quarantine) {
        heap->quarantine = _fa_os_map_aligned(sizeof(struct fa_quarantine), FA_OS_PAGE);
        if (heap->quarantine)
            heap->quarantine->rng = _fa_os_random() | 1;
    }
    return heap->quarantine;
}

/* A block in the quarantine must be as it was freed: no link nor mark (whole: the fill and
 * the size word too; of a big block, only the first page is accessible, and the rest cannot
 * have changed); else `caller` reports a write after free. */
static inline __attribute__((always_inline)) void check_quarantined(const struct fa_held *held,
                                                                    const char *caller, bool whole)
{
    const fa_block_t *block = held->block;
    const fa_page_t *page = held->page;
    uintptr_t b = (uintptr_t)block;
    if ((block->link | block->mark) != 0 ||
        (whole &&
         !(is_big(page) ? fill_intact(b, FA_OS_PAGE) : free_block_intact(b, shape_of(page))))) {
        /* A big block's size word may be inaccessible here: its room is said. */
        if (!is_big(page))
            tell_callers(b, shape_of(page).room, true);
        report(caller, block, "write after free",
               is_big(page) ? shape_of(page).room - FA_TRAILER : claimed_size(page, b));
    }
}

/* A big block in the quarantine is inaccessible past its first page (on), so that a read or
 * write after free there faults at once (secure_guard.c reports it); accessible again (off)
 * when it leaves. Its first page holds the link and mark and the fill, checked as any block's.
 * Two mprotect calls for each free of a big block: 2.9 times the CPU time of the bench's
 * churn-wide (a block in 15 is big there); FITALLOC_SECURE_PROTECT=0 leaves them out. The
 * quarantine counts FA_BIG_HELD bytes for it. */
static void protect_held(const fa_page_t *page, fa_block_t *block, bool on)
{
    if (!is_big(page) || !protect_big)
        return;
    char *from = (char *)block + FA_OS_PAGE;
    size_t len = shape_of(page).room - FA_OS_PAGE;
    if (on) {
        _fa_os_protect(from, len);
    } else {
        _fa_os_unprotect(from, len);
    }
}

/* The memory a block in the quarantine holds (protect_held). */
static size_t held_bytes(const fa_page_t *page)
{
    return is_big(page) && protect_big ? FA_BIG_HELD : page->block_size;
}

/* The oldest block leaves the quarantine: its first 16 bytes, where the free list is about to
 * write its link and mark, are checked (malloc checks the rest before handing it out). */
static void release_oldest(struct fa_quarantine *q)
{
    struct fa_held *held = &q->held[q->first];
    q->first = (q->first + 1) % FA_QUARANTINE_SLOTS;
    q->count--;
    q->bytes -= held_bytes(held->page);
    protect_held(held->page, held->block, false);
    check_quarantined(held, "free", false);
    _fa_free_block(held->page, held->block);
}

/* The quarantines holding blocks, and the bytes each may hold. Each thread holds up to
 * FITALLOC_QUARANTINE bytes while few threads do; with more, the quarantines share
 * FA_QUARANTINE_SHARED times that, down to a sixteenth of it each: with a full quarantine per
 * thread, a program of many threads held many times the default mode's memory in them
 * (docs/security.md: CS33's 32 threads). A block stays
 * there until the thread's next frees push it out, whatever the limit: the newest one never
 * leaves at once. */
#define FA_QUARANTINE_SHARED 2
static size_t holding;

static inline size_t quarantine_limit(struct fa_quarantine *q)
{
    size_t each = (size_t)fa_option(quarantine);
    size_t n = fa_atomic_load_relaxed(&holding);
    if (fa_likely(n <= FA_QUARANTINE_SHARED))
        return each;
    /* The division once for each count of holders (it changes as threads start and end), not
     * at every free. */
    if (n != q->limit_holding) {
        size_t share = FA_QUARANTINE_SHARED * each / n;
        q->limit = share > each / 16 ? share : each / 16;
        q->limit_holding = n;
    }
    return q->limit;
}

void _fa_secure_flush(fa_heap_t *heap)
{
    if (!heap->quarantine || !heap->quarantine->count)
        return;
    while (heap->quarantine->count)
        release_oldest(heap->quarantine);
    fa_atomic_add_relaxed(&holding, (size_t)-1);
}

void _fa_secure_free(fa_page_t *page, void *p, const char *caller, size_t size)
{
    uintptr_t b = (uintptr_t)p;
    struct shape shape = shape_of(page);
    /* The check of the slot after the block reads its size word, on another line than the
     * block's own: fetched while the block's trailer is checked. */
    __builtin_prefetch((const void *)(b + page->block_size + shape.room - 8));
    uintptr_t w = recorded_word(caller, b, shape.room);
    if (w == SIZE_MAX) {
        tell_callers(b, shape.room, false);
        report(caller, p, "heap overflow", claimed_size(page, b));
    }
    size_t n = word_n(w);
    if (origin_of(w) != release_origin(caller)) {
        tell_callers(b, shape.room, false);
        report_mismatch(caller, p, n, origin_of(w));
    }
    fa_heap_t *heap = _fa_heap_tls;
    /* A big block is alone in its page, between closed memory. */
    if (!is_big(page) && fa_owner_heap(fa_atomic_load_relaxed(&page->owner)) == heap)
        check_neighbours(page, b, shape, caller, n);
    if (size && size != n)
        _fa_fatal("fitalloc: %s(): size mismatch: %zu bytes given for the %zu-byte block at %p\n",
                  caller, size, n, p);
    fill_set(b, shape);
    /* The word as it was, its check bits kept, freed (the form is no longer said). */
    uintptr_t freed = (w & ~FA_WORD_STATE) | FA_WORD_FREED;
    fa_atomic_store_release((uintptr_t *)(b + shape.room - 8), freed ^ word_key(b));
    fa_block_t *block = p;
    if (heap == &_fa_heap_empty)
        heap = _fa_heap_init_thread();
    struct fa_quarantine *q = heap ? quarantine_of(heap) : NULL;
    if (!q) {
        _fa_free_block(page, block);
        return;
    }
    if (!q->count)
        fa_atomic_add_relaxed(&holding, 1);
    /* The newest block always stays, however big: it must not be the next one handed out. */
    size_t limit = quarantine_limit(q);
    size_t held = held_bytes(page);
    while (q->count && (q->count == FA_QUARANTINE_SLOTS || q->bytes + held > limit))
        release_oldest(q);
    protect_held(page, block, true);
    q->held[(q->first + q->count) % FA_QUARANTINE_SLOTS] =
        (struct fa_held){block, page, _fa_secure_caller};
    q->count++;
    /* Kept apart: the compiler would load `count` and `bytes` as one vector just after
     * release_oldest stored them one by one, a load that waits for both stores to reach the
     * cache. */
    __asm__ volatile("" ::: "memory");
    q->bytes += held;
    /* The next free releases the oldest block: its first line (the link and mark, checked and
     * written then), freed long ago, is fetched now. */
    __builtin_prefetch(q->held[q->first].block, 1);
}

/* At exit: blocks still in the quarantine must be as they were freed. */
void _fa_secure_check_quarantine(void)
{
    struct fa_quarantine *q = _fa_heap_tls->quarantine;
    for (size_t i = 0; q && i < q->count; i++)
        check_quarantined(&q->held[(q->first + i) % FA_QUARANTINE_SLOTS], "exit", true);
}

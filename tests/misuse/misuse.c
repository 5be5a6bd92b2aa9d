/* The C cases of the misuse battery (tools/misuse.sh): each run makes one heap bug on purpose.
 *
 *   misuse <case> <size>        misuse list   (prints the case names)
 *
 * Built by tools/misuse.sh with -O0 -fno-builtin-malloc/free/calloc/realloc; the frame (setup,
 * phases, the "after" allocations, exit codes) is in misuse.h. free_sized is looked up with
 * dlsym, so the program also runs where the C library lacks it (then those cases are n/a).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "misuse.h"

typedef void (*free_sized_fn)(void *, size_t);

static char global_array[64] __attribute__((aligned(64)));
static unsigned char pattern[(1u << 20) + 64]; /* the bytes an overflow writes (0x41) */

static free_sized_fn find_free_sized(void)
{
    return (free_sized_fn)dlsym(RTLD_DEFAULT, "free_sized");
}

/* The buggy calls, through non-inlined functions on laundered pointers so that gcc neither
 * folds them nor sees them. */
static __attribute__((noinline)) void bad_free(void *p)
{
    free(mu_launder(p));
}

static __attribute__((noinline)) void *bad_realloc(void *p, size_t n)
{
    return realloc(mu_launder(p), n);
}

static __attribute__((noinline)) void write_loop(char *p, ptrdiff_t at, size_t len)
{
    volatile char *v = (volatile char *)mu_launder(p);
    for (size_t i = 0; i < len; i++)
        v[at + (ptrdiff_t)i] = 0x41;
}

static __attribute__((noinline)) void write_memcpy(char *p, ptrdiff_t at, size_t len)
{
    char *d = (char *)mu_launder(p);
    memcpy(d + at, pattern, len);
}

/* A runaway write downwards: p[-1], p[-2], ... p[-len]. */
static __attribute__((noinline)) void write_down(char *p, size_t len)
{
    volatile char *v = (volatile char *)mu_launder(p);
    for (size_t i = 1; i <= len; i++)
        v[-(ptrdiff_t)i] = 0x41;
}

static __attribute__((noinline)) int read_byte(const char *p)
{
    return *(volatile const char *)mu_launder((void *)p);
}

/* free(p) twice. */
static int double_free(size_t n)
{
    char *p = mu_alloc(n);
    mu_free(p);
    mu_phase("bug");
    bad_free(p);
    return MU_OK;
}

/* free(p), other allocations and frees (some kept), then free(p) again: p is free but no
 * longer the most recently freed block of its size. */
static int double_free_between(size_t n)
{
    char *p = mu_alloc(n);
    char *a = mu_alloc(n);
    char *b = mu_alloc(n);
    mu_alloc(n); /* kept */
    mu_free(p);
    mu_free(a);
    mu_alloc(4 * n + 64);  /* another size class, kept */
    char *c = mu_alloc(n); /* kept: takes a in a LIFO allocator */
    memset(c, 0x44, n);
    mu_free(b);
    char *d = mu_alloc(24);
    mu_alloc(n + 100); /* kept */
    mu_free(d);
    mu_phase("bug");
    bad_free(p);
    return MU_OK;
}

/* free(p), then realloc(p, 2n). */
static int double_free_realloc(size_t n)
{
    char *p = mu_alloc(n);
    mu_free(p);
    mu_phase("bug");
    mu_track(bad_realloc(p, 2 * n), 2 * n);
    return MU_OK;
}

/* free_sized(p, n) twice. */
static int double_free_sized(size_t n)
{
    free_sized_fn fs = find_free_sized();
    if (!fs)
        return MU_NA;
    char *p = mu_alloc(n);
    mu_untrack(p);
    fs(mu_launder(p), n);
    mu_phase("bug");
    fs(mu_launder(p), n);
    return MU_OK;
}

/* free_sized(p, n + 64): the wrong size. */
static int mismatch_free_sized(size_t n)
{
    free_sized_fn fs = find_free_sized();
    if (!fs)
        return MU_NA;
    char *p = mu_alloc(n);
    memset(p, 0x11, n);
    mu_untrack(p);
    mu_phase("bug");
    fs(mu_launder(p), n + 64);
    return MU_OK;
}

/* free(p + 16) of a live block of at least 64 bytes. The block stays tracked (it is live). */
static int invalid_interior(size_t n)
{
    char *p = mu_alloc(n);
    memset(p, 0x11, n);
    mu_phase("bug");
    bad_free(p + 16);
    return MU_OK;
}

static int invalid_stack(size_t n)
{
    (void)n;
    char buf[64] __attribute__((aligned(64)));
    memset(buf, 0x11, sizeof buf);
    mu_phase("bug");
    bad_free(buf);
    return MU_OK;
}

static int invalid_global(size_t n)
{
    (void)n;
    mu_phase("bug");
    bad_free(global_array);
    return MU_OK;
}

/* Map the unmapped pages of [from, from + len) (anonymous, read-write), so that a large
 * overflow runs through whatever memory follows the block instead of faulting in the program's
 * own write at the end of the block's mapping. Mapped pages are left alone: they are what the
 * overflow smashes. 0 if a page could not be mapped. */
static int map_holes(char *from, size_t len)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = (uintptr_t)from & ~(page - 1);
    uintptr_t end = ((uintptr_t)from + len + page - 1) & ~(page - 1);
    for (; a < end; a += page) {
        unsigned char resident;
        if (mincore((void *)a, page, &resident) == 0)
            continue;
        if (errno != ENOMEM)
            return 0;
        void *m = mmap((void *)a, page, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        if (m != (void *)a)
            return 0;
    }
    return 1;
}

/* The same for the unmapped pages of [from - len, from). */
static int map_holes_before(char *from, size_t len)
{
    return (uintptr_t)from > len && map_holes(from - len, len);
}

enum how { BY_LOOP, BY_MEMCPY, BY_LOOP_REALLOC, BEFORE_BLOCK, BEFORE_BY_MEMCPY };

/* Write `len` bytes past the requested size, then free (or realloc to 2n). */
static int overflow(size_t n, size_t len, enum how how)
{
    char *p = mu_alloc(n);
    memset(p, 0x11, n);
    if (len > 4096 && !map_holes(p + n, len))
        return MU_NA;
    mu_phase("bug");
    if (how == BY_MEMCPY)
        write_memcpy(p, (ptrdiff_t)n, len);
    else
        write_loop(p, (ptrdiff_t)n, len);
    mu_phase("free");
    if (how == BY_LOOP_REALLOC) {
        mu_untrack(p);
        mu_track(bad_realloc(p, 2 * n), 2 * n);
    } else {
        mu_free(p);
    }
    return MU_OK;
}

/* Write `len` bytes just before the block (downwards, or upwards by memcpy), then free it. */
static int underflow(size_t n, size_t len, enum how how)
{
    char *p = mu_alloc(n);
    memset(p, 0x11, n);
    if (len > 4096 && !map_holes_before(p, len))
        return MU_NA;
    mu_phase("bug");
    if (how == BEFORE_BY_MEMCPY)
        write_memcpy(p, -(ptrdiff_t)len, len);
    else
        write_down(p, len);
    mu_phase("free");
    mu_free(p);
    return MU_OK;
}

/* One byte written `at` bytes from the block's start (past its end, or before it: at < 0),
 * nothing in between, then free. The page there is mapped first if nothing is (as map_holes
 * does), so that what is checked is the allocator's layout, not the program's address space. */
static int store_at(size_t n, ptrdiff_t at)
{
    char *p = mu_alloc(n);
    memset(p, 0x11, n);
    if (!map_holes(p + at, 1))
        return MU_NA;
    mu_phase("bug");
    write_loop(p, at, 1);
    mu_phase("free");
    mu_free(p);
    return MU_OK;
}

/* 1 MiB past the end: hardened_malloc's size-class regions lie far apart, with guards. */
static int store_1M_past(size_t n)
{
    return store_at(n, (ptrdiff_t)(n + (1u << 20)));
}

/* 32 bytes before the block: in the slot before it, past that one's own canary. */
static int store_32_before(size_t n)
{
    return store_at(n, -32);
}

/* 32 bytes past the end: an 8-byte block's own canary is jumped, the byte lands in the next
 * slot (its canary if it is live, its free mark if not). */
static int store_32_past(size_t n)
{
    return store_at(n, (ptrdiff_t)(n + 32));
}

/* free(p), then write 16 bytes at p. */
static int write_after_free(size_t n)
{
    char *p = mu_alloc(n);
    memset(p, 0x11, n);
    mu_free(p);
    mu_phase("bug");
    write_loop(p, 0, 16);
    return MU_OK;
}

/* free(p), write a byte in the middle of it, then allocate and free blocks of the size until
 * the freed block must have come back (an allocator checking freed blocks when it hands them
 * out again catches it then). */
static int write_after_free_reuse(size_t n)
{
    char *p = mu_alloc(n);
    memset(p, 0x11, n);
    mu_free(p);
    mu_phase("bug");
    write_loop(p, (ptrdiff_t)(n / 2), 1);
    mu_phase("after");
    int rounds = n >= (128u << 10) ? 64 : 100000;
    for (int i = 0; i < rounds; i++)
        free(malloc(n));
    return MU_OK;
}

/* Does a freed block still hold what the program wrote there? A pattern of odd bytes is
 * written, the block freed and read back: exit 7 if less than half of the pattern is left, 0
 * if half or more (half, not one byte: an encoded list link may hold one of the pattern's
 * bytes by chance); a read that faults (an inaccessible block) stops the program there. */
static unsigned char stale_byte(size_t i)
{
    return (unsigned char)(i * 131 + 7) | 1;
}

static int stale_after_free(size_t n)
{
    unsigned char *p = mu_alloc(n);
    for (size_t i = 0; i < n; i++)
        p[i] = stale_byte(i);
    mu_free(p);
    mu_phase("bug");
    size_t left = 0;
    for (size_t i = 0; i < n; i++)
        left += (unsigned char)read_byte((char *)p + i) == stale_byte(i);
    return 2 * left >= n ? MU_OK : MU_CLEARED;
}

/* Is every byte of a freed block zero? exit 7 (cleared) if so, 0 if one byte of the program's
 * or the allocator's (a list link, a free mark) is left; a read that faults stops the program
 * there. */
static int freed_all_zero(size_t n)
{
    unsigned char *p = mu_alloc(n);
    memset(p, 0x5a, n);
    mu_free(p);
    mu_phase("bug");
    for (size_t i = 0; i < n; i++)
        if (read_byte((char *)p + i) != 0)
            return MU_OK;
    return MU_CLEARED;
}

/* A copy that starts `before` bytes before the block, in the slot in front of it, and runs 8
 * bytes into the block (snmalloc's guarded memcpy stops it: it crosses the end of the slot it
 * starts in). */
static int memcpy_into(size_t n, size_t before)
{
    char *p = mu_alloc(n);
    memset(p, 0x11, n);
    mu_phase("bug");
    write_memcpy(p, -(ptrdiff_t)before, before + 8);
    mu_phase("free");
    mu_free(p);
    return MU_OK;
}

static int memcpy_into_1(size_t n)
{
    return memcpy_into(n, 1);
}

static int memcpy_into_32(size_t n)
{
    return memcpy_into(n, 32);
}

/* Through a malloc(0) pointer: read or write a byte, before or after free; free it twice. */
static int zero_size(int write, int after_free)
{
    char *p = malloc(0);
    if (!p)
        return MU_NA;
    if (after_free)
        free(mu_launder(p));
    mu_phase("bug");
    if (write)
        write_loop(p, 0, 1);
    else
        (void)read_byte(p);
    if (!after_free)
        free(mu_launder(p));
    return MU_OK;
}

/* The four cases of zero_size: name(n) reads or writes, before or after the free. */
#define ZERO_CASE(name, write, after_free)                                                         \
    static int name(size_t n)                                                                      \
    {                                                                                              \
        (void)n;                                                                                   \
        return zero_size(write, after_free);                                                       \
    }
ZERO_CASE(zero_read, 0, 0)
ZERO_CASE(zero_write, 1, 0)
ZERO_CASE(zero_read_after_free, 0, 1)
ZERO_CASE(zero_write_after_free, 1, 1)

static int zero_double_free(size_t n)
{
    (void)n;
    char *p = malloc(0);
    if (!p)
        return MU_NA;
    free(mu_launder(p));
    mu_phase("bug");
    bad_free(p);
    return MU_OK;
}

/* Does malloc(n) right after free(p) give p back? (quarantine) */
static int reuse_after_free(size_t n)
{
    char *p = mu_alloc(n);
    mu_free(p);
    mu_phase("bug");
    char *q = mu_alloc(n);
    return q == p ? MU_REUSED : MU_OK;
}

/* A case runs `run`, or (run NULL) writes `len` bytes past the block (overflow) or before it
 * (underflow) in the manner `how`. */
static const struct {
    const char *name;
    int (*run)(size_t n);
    size_t min_block; /* the block is at least this large (setup blocks too) */
    size_t len;
    enum how how;
} cases[] = {
    {"double-free", double_free, 0, 0, 0},
    {"double-free-between", double_free_between, 0, 0, 0},
    {"double-free-realloc", double_free_realloc, 0, 0, 0},
    {"double-free-sized", double_free_sized, 0, 0, 0},
    {"invalid-interior", invalid_interior, 64, 0, 0},
    {"invalid-stack", invalid_stack, 0, 0, 0},
    {"invalid-global", invalid_global, 0, 0, 0},
    {"overflow-1-loop", NULL, 0, 1, BY_LOOP},
    {"overflow-1-memcpy", NULL, 0, 1, BY_MEMCPY},
    {"overflow-1-realloc", NULL, 0, 1, BY_LOOP_REALLOC},
    {"overflow-32-loop", NULL, 0, 32, BY_LOOP},
    {"overflow-32-memcpy", NULL, 0, 32, BY_MEMCPY},
    {"overflow-32-realloc", NULL, 0, 32, BY_LOOP_REALLOC},
    {"overflow-1M-loop", NULL, 0, 1u << 20, BY_LOOP},
    {"overflow-1M-memcpy", NULL, 0, 1u << 20, BY_MEMCPY},
    {"overflow-1M-realloc", NULL, 0, 1u << 20, BY_LOOP_REALLOC},
    {"underflow-1", NULL, 0, 1, BEFORE_BLOCK},
    {"underflow-1-memcpy", NULL, 0, 1, BEFORE_BY_MEMCPY},
    {"underflow-32", NULL, 0, 32, BEFORE_BLOCK},
    {"underflow-32-memcpy", NULL, 0, 32, BEFORE_BY_MEMCPY},
    {"underflow-1M", NULL, 0, 1u << 20, BEFORE_BLOCK},
    {"store-1M-past", store_1M_past, 0, 0, 0},
    {"store-32-before", store_32_before, 0, 0, 0},
    {"store-32-past", store_32_past, 0, 0, 0},
    {"write-after-free", write_after_free, 0, 0, 0},
    {"write-after-free-reuse", write_after_free_reuse, 0, 0, 0},
    {"stale-after-free", stale_after_free, 0, 0, 0},
    {"freed-all-zero", freed_all_zero, 0, 0, 0},
    {"memcpy-into-1", memcpy_into_1, 0, 0, 0},
    {"memcpy-into-32", memcpy_into_32, 0, 0, 0},
    {"malloc0-read", zero_read, 0, 0, 0},
    {"malloc0-write", zero_write, 0, 0, 0},
    {"malloc0-read-after-free", zero_read_after_free, 0, 0, 0},
    {"malloc0-write-after-free", zero_write_after_free, 0, 0, 0},
    {"malloc0-double-free", zero_double_free, 0, 0, 0},
    {"reuse-after-free", reuse_after_free, 0, 0, 0},
    {"mismatch-free-sized", mismatch_free_sized, 0, 0, 0},
};

int main(int argc, char **argv)
{
    size_t ncases = sizeof cases / sizeof cases[0];
    if (argc == 2 && strcmp(argv[1], "list") == 0) {
        for (size_t i = 0; i < ncases; i++)
            printf("%s\n", cases[i].name);
        return MU_OK;
    }
    size_t n;
    if (argc != 3 || !mu_size_arg(argv[2], &n)) {
        fprintf(stderr, "usage: %s <case> <size> | list\n", argv[0]);
        return MU_USAGE;
    }
    memset(pattern, 0x41, sizeof pattern);
    for (size_t i = 0; i < ncases; i++) {
        if (strcmp(argv[1], cases[i].name) != 0)
            continue;
        if (n < cases[i].min_block)
            n = cases[i].min_block;
        if (n == 0)
            n = 64; /* the size-independent cases */
        mu_setup(n);
        enum how how = cases[i].how;
        int rc = cases[i].run                                     ? cases[i].run(n)
                 : how == BEFORE_BLOCK || how == BEFORE_BY_MEMCPY ? underflow(n, cases[i].len, how)
                                                                  : overflow(n, cases[i].len, how);
        if (rc == MU_NA)
            return rc;
        return mu_after(n, rc);
    }
    fprintf(stderr, "%s: unknown case '%s'\n", argv[0], argv[1]);
    return MU_USAGE;
}

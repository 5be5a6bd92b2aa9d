/* Tiny test helpers for the fitalloc test suite: assertions, test size, PRNG.
 *
 * Header-only on purpose (every test is its own executable). Nothing here
 * allocates memory, so the helpers are safe to use around stats deltas.
 */
#ifndef FITALLOC_TESTS_CHECK_H
#define FITALLOC_TESTS_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_THREAD__)
#define FA_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FA_TEST_TSAN 1
#endif
#endif
#ifndef FA_TEST_TSAN
#define FA_TEST_TSAN 0
#endif

#if defined(__SANITIZE_ADDRESS__)
#define FA_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FA_TEST_ASAN 1
#endif
#endif
#ifndef FA_TEST_ASAN
#define FA_TEST_ASAN 0
#endif

#define FA_TEST_SANITIZED (FA_TEST_TSAN || FA_TEST_ASAN)

/* FA_TEST_TSAN_OPTIONS("name=value:..."): the ThreadSanitizer options of this test program, which
 * TSan reads before main from the function this defines; nothing in other builds. */
#if FA_TEST_TSAN
#define FA_TEST_TSAN_OPTIONS(options)                                                              \
    const char *__tsan_default_options(void);                                                      \
    const char *__tsan_default_options(void)                                                       \
    {                                                                                              \
        return (options);                                                                          \
    }
#else
#define FA_TEST_TSAN_OPTIONS(options)
#endif

/* CHECK(cond): abort with file:line and the expression when cond is false. */
#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
            fflush(stderr);                                                                        \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* CHECK_MSG(cond, fmt, ...): like CHECK with an extra printf-style message. */
#define CHECK_MSG(cond, ...)                                                                       \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            fflush(stderr);                                                                        \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* Comparisons of a and b converted to T (unsigned long long or long long), printing both
 * values as unsigned, signed and hexadecimal. */
#define CHECK_OP_(T, a, op, b)                                                                     \
    do {                                                                                           \
        T check_a_ = (T)(a);                                                                       \
        T check_b_ = (T)(b);                                                                       \
        if (!(check_a_ op check_b_)) {                                                             \
            fprintf(stderr,                                                                        \
                    "%s:%d: CHECK failed: %s %s %s (%llu [%lld, 0x%llx] vs "                       \
                    "%llu [%lld, 0x%llx])\n",                                                      \
                    __FILE__, __LINE__, #a, #op, #b, (unsigned long long)check_a_,                 \
                    (long long)check_a_, (unsigned long long)check_a_,                             \
                    (unsigned long long)check_b_, (long long)check_b_,                             \
                    (unsigned long long)check_b_);                                                 \
            fflush(stderr);                                                                        \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#define CHECK_EQ(a, b) CHECK_OP_(unsigned long long, a, ==, b)
#define CHECK_NE(a, b) CHECK_OP_(unsigned long long, a, !=, b)
#define CHECK_LT(a, b) CHECK_OP_(unsigned long long, a, <, b)
#define CHECK_LE(a, b) CHECK_OP_(unsigned long long, a, <=, b)
#define CHECK_GT(a, b) CHECK_OP_(unsigned long long, a, >, b)
#define CHECK_GE(a, b) CHECK_OP_(unsigned long long, a, >=, b)
/* Signed comparisons (for values that may legitimately be negative). */
#define CHECK_SEQ(a, b) CHECK_OP_(long long, a, ==, b)
#define CHECK_SGE(a, b) CHECK_OP_(long long, a, >=, b)
#define CHECK_SLE(a, b) CHECK_OP_(long long, a, <=, b)

/* p is aligned to `align` (a power of two). */
#define CHECK_ALIGNED(p, align) CHECK_EQ(((uintptr_t)(const void *)(p)) & ((uintptr_t)(align)-1), 0)

/* Scale factor from FITALLOC_TEST_SIZE: "smoke" (default) = 1, "real" = 10. */
static inline unsigned fa_test_scale(void)
{
    const char *s = getenv("FITALLOC_TEST_SIZE");
    if (s != NULL && strcmp(s, "real") == 0)
        return 10;
    return 1;
}

/* How many operations a test runs: `base` at the smoke size, times the scale, and fewer under
 * the sanitizers, whose runtimes make each operation many times slower (TSan most). */
static inline unsigned long fa_test_ops(unsigned long base)
{
    unsigned long n = base * fa_test_scale();
    return FA_TEST_TSAN ? n / 4 : FA_TEST_ASAN ? n / 2 : n;
}

/* splitmix64: deterministic, good enough to drive tests; also used as a hash. */
static inline uint64_t fa_mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

typedef struct {
    uint64_t s;
} fa_rng;

static inline void fa_rng_seed(fa_rng *r, uint64_t seed)
{
    r->s = seed;
}

static inline uint64_t fa_rng_next(fa_rng *r)
{
    r->s += 0x9E3779B97F4A7C15ull;
    uint64_t z = r->s;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, n) (n > 0; tiny modulo bias is irrelevant here). */
static inline uint64_t fa_rng_below(fa_rng *r, uint64_t n)
{
    return fa_rng_next(r) % n;
}

/* Size with a log-uniform distribution in [1, max] (max >= 1). */
static inline size_t fa_rng_logsize(fa_rng *r, size_t max)
{
    unsigned bits = 0;
    while (bits < 63 && ((size_t)1 << (bits + 1)) <= max)
        bits++;
    unsigned b = (unsigned)fa_rng_below(r, bits + 1); /* 0..bits */
    size_t lo = (size_t)1 << b;
    size_t hi = (b >= bits) ? max : ((size_t)1 << (b + 1)) - 1;
    return lo + (size_t)fa_rng_below(r, hi - lo + 1);
}

/* ---- block patterns: word k of a block with id `id` is fa_mix64(id) ^ k*C ---- */

static inline uint64_t fa_pattern_word(uint64_t id, size_t k)
{
    return fa_mix64(id) ^ ((uint64_t)k * 0xD6E8FEB86659FD93ull);
}

/* Fill n bytes at p with the pattern of `id`. */
static inline void fa_pattern_fill(void *p, size_t n, uint64_t id)
{
    unsigned char *b = (unsigned char *)p;
    uint64_t base = fa_mix64(id);
    size_t words = n / 8, k;
    for (k = 0; k < words; k++) {
        uint64_t w = base ^ ((uint64_t)k * 0xD6E8FEB86659FD93ull);
        memcpy(b + 8 * k, &w, 8);
    }
    if (n % 8) {
        uint64_t w = base ^ ((uint64_t)words * 0xD6E8FEB86659FD93ull);
        memcpy(b + 8 * words, &w, n % 8);
    }
}

/* Offset of the first byte (< n) that does not match the pattern, or (size_t)-1. */
static inline size_t fa_pattern_find_bad(const void *p, size_t n, uint64_t id)
{
    const unsigned char *b = (const unsigned char *)p;
    uint64_t base = fa_mix64(id);
    size_t words = n / 8, k;
    for (k = 0; k < words; k++) {
        uint64_t w = base ^ ((uint64_t)k * 0xD6E8FEB86659FD93ull), v;
        memcpy(&v, b + 8 * k, 8);
        if (v != w) {
            size_t i;
            for (i = 0; i < 8; i++)
                if (((const unsigned char *)&v)[i] != ((const unsigned char *)&w)[i])
                    return 8 * k + i;
        }
    }
    if (n % 8) {
        uint64_t w = base ^ ((uint64_t)words * 0xD6E8FEB86659FD93ull);
        if (memcmp(b + 8 * words, &w, n % 8) != 0) {
            size_t i;
            for (i = 0; i < n % 8; i++)
                if (b[8 * words + i] != ((const unsigned char *)&w)[i])
                    return 8 * words + i;
        }
    }
    return (size_t)-1;
}

/* CHECK that the n bytes at p hold the pattern of id. */
#define CHECK_PATTERN(p, n, id)                                                                    \
    do {                                                                                           \
        size_t check_bad_ = fa_pattern_find_bad((p), (n), (id));                                   \
        CHECK_MSG(check_bad_ == (size_t)-1,                                                        \
                  "block %p (size %zu, id %llu) corrupted at offset %zu", (const void *)(p),       \
                  (size_t)(n), (unsigned long long)(id), check_bad_);                              \
    } while (0)

/* Offset of the first byte (< n) at p that is not `c`, or (size_t)-1. */
static inline size_t fa_find_not_byte(const void *p, size_t n, unsigned char c)
{
    const unsigned char *b = (const unsigned char *)p;
    uint64_t w = 0x0101010101010101ull * c;
    size_t i = 0;
    while (i < n && ((uintptr_t)(b + i) & 7))
        if (b[i++] != c)
            return i - 1;
    for (; i + 8 <= n; i += 8) {
        uint64_t v;
        memcpy(&v, b + i, 8);
        if (v != w)
            break;
    }
    for (; i < n; i++)
        if (b[i] != c)
            return i;
    return (size_t)-1;
}

#define CHECK_BYTES(p, n, c)                                                                       \
    do {                                                                                           \
        size_t check_bad_ = fa_find_not_byte((p), (n), (unsigned char)(c));                        \
        CHECK_MSG(check_bad_ == (size_t)-1,                                                        \
                  "block %p (%zu bytes) expected 0x%02x, byte at offset %zu is "                   \
                  "0x%02x",                                                                        \
                  (const void *)(p), (size_t)(n), (unsigned)(unsigned char)(c), check_bad_,        \
                  (unsigned)((const unsigned char *)(p))[check_bad_]);                             \
    } while (0)

#endif /* FITALLOC_TESTS_CHECK_H */

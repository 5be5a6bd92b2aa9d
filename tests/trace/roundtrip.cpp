// The known sequence of the round-trip test (test_roundtrip.sh): every kind of call the trace
// records, each logged by the program itself as "op size align_log2 in out" (what it asked and
// what it got back), printed after the sequence. Between the two marker calls (malloc of 12345
// and 12346 bytes) the program calls nothing but the allocator, so the trace must hold exactly
// these calls there, in this order, on one thread.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <malloc.h>
#include <new>

enum { MALLOC = 1, CALLOC, REALLOC, ALIGNED, FREE, NEW, NEW_ARRAY, DELETE, DELETE_ARRAY };

struct call {
    int op;
    uint64_t size;
    int align_log2;
    uintptr_t in, out;
};
static call calls[256]; // static: logging must not allocate
static int count;

static void log_call(int op, uint64_t size, int align_log2, const void *in, const void *out)
{
    calls[count++] = {op, size, align_log2, (uintptr_t)in, (uintptr_t)out};
}

// Keep the compiler from pairing and removing allocations.
static void *volatile sink;
static void *kept(void *p)
{
    sink = p;
    return sink;
}

int main()
{
    typedef void (*free_sized_fn)(void *, size_t);
    typedef void (*free_aligned_sized_fn)(void *, size_t, size_t);
    // Looked up before the sequence: dlsym may allocate.
    free_sized_fn free_sized_p = (free_sized_fn)dlsym(RTLD_DEFAULT, "free_sized");
    free_aligned_sized_fn free_aligned_sized_p =
        (free_aligned_sized_fn)dlsym(RTLD_DEFAULT, "free_aligned_sized");
    if (!free_sized_p || !free_aligned_sized_p) {
        fprintf(stderr, "free_sized or free_aligned_sized not found\n");
        return 2;
    }
    static volatile size_t huge = SIZE_MAX / 2; // calloc(huge, 3) overflows

    void *m = kept(malloc(12345)); // start marker
    log_call(MALLOC, 12345, 0, nullptr, m);
    free(m);
    log_call(FREE, 0, 0, m, nullptr);

    void *a = kept(malloc(100));
    log_call(MALLOC, 100, 0, nullptr, a);
    void *b = kept(calloc(10, 30));
    log_call(CALLOC, 300, 0, nullptr, b);
    void *a2 = kept(realloc(a, 5000)); // grows: moves
    log_call(REALLOC, 5000, 0, a, a2);
    void *a3 = kept(realloc(a2, 40)); // shrinks
    log_call(REALLOC, 40, 0, a2, a3);
    void *c = kept(aligned_alloc(64, 256));
    log_call(ALIGNED, 256, 6, nullptr, c);
    void *d = nullptr;
    int rc = posix_memalign(&d, 4096, 1000);
    kept(d);
    log_call(ALIGNED, 1000, 12, nullptr, rc ? nullptr : d);
    void *e = kept(memalign(128, 50));
    log_call(ALIGNED, 50, 7, nullptr, e);
    void *f = kept(valloc(10));
    log_call(ALIGNED, 10, 12, nullptr, f);
    void *g = kept(realloc(nullptr, 77));
    log_call(REALLOC, 77, 0, nullptr, g);
    void *g2 = kept(reallocarray(g, 3, 50));
    log_call(REALLOC, 150, 0, g, g2);
    free(nullptr);
    log_call(FREE, 0, 0, nullptr, nullptr);
    free_sized_p(b, 300);
    log_call(FREE, 300, 0, b, nullptr);
    free_aligned_sized_p(c, 64, 256);
    log_call(FREE, 256, 0, c, nullptr);
    void *h = kept(realloc(e, 0)); // frees e, returns NULL
    log_call(REALLOC, 0, 0, e, h);
    void *o = kept(calloc(huge, 3)); // overflow: NULL
    log_call(CALLOC, UINT64_MAX, 0, nullptr, o);
    void *l = kept(malloc(300000)); // a large block, grown in place or moved
    log_call(MALLOC, 300000, 0, nullptr, l);
    void *l2 = kept(realloc(l, 900000));
    log_call(REALLOC, 900000, 0, l, l2);
    free(l2);
    log_call(FREE, 0, 0, l2, nullptr);

    void *n1 = kept(::operator new(24));
    log_call(NEW, 24, 0, nullptr, n1);
    ::operator delete(n1);
    log_call(DELETE, 0, 0, n1, nullptr);
    void *n2 = kept(::operator new[](80));
    log_call(NEW_ARRAY, 80, 0, nullptr, n2);
    ::operator delete[](n2);
    log_call(DELETE_ARRAY, 0, 0, n2, nullptr);
    void *n3 = kept(::operator new(32));
    log_call(NEW, 32, 0, nullptr, n3);
    ::operator delete(n3, (size_t)32);
    log_call(DELETE, 32, 0, n3, nullptr);
    void *n4 = kept(::operator new(64, std::align_val_t(256)));
    log_call(NEW, 64, 8, nullptr, n4);
    ::operator delete(n4, std::align_val_t(256));
    log_call(DELETE, 0, 0, n4, nullptr);
    void *n5 = kept(::operator new(16, std::nothrow));
    log_call(NEW, 16, 0, nullptr, n5);
    ::operator delete(n5, std::nothrow);
    log_call(DELETE, 0, 0, n5, nullptr);
    void *n6 = kept(::operator new[](100, std::align_val_t(64)));
    log_call(NEW_ARRAY, 100, 6, nullptr, n6);
    ::operator delete[](n6, (size_t)100, std::align_val_t(64));
    log_call(DELETE_ARRAY, 100, 0, n6, nullptr);

    free(a3);
    log_call(FREE, 0, 0, a3, nullptr);
    free(d);
    log_call(FREE, 0, 0, d, nullptr);
    free(f);
    log_call(FREE, 0, 0, f, nullptr);
    free(g2);
    log_call(FREE, 0, 0, g2, nullptr);

    m = kept(malloc(12346)); // end marker
    log_call(MALLOC, 12346, 0, nullptr, m);
    free(m);
    log_call(FREE, 0, 0, m, nullptr);

    for (int i = 0; i < count; i++)
        printf("%d %llu %d %llu %llu\n", calls[i].op, (unsigned long long)calls[i].size,
               calls[i].align_log2, (unsigned long long)calls[i].in,
               (unsigned long long)calls[i].out);
    return 0;
}

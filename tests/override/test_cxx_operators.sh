# ctest labels: reliability
# Every C++ operator new/delete form is fitalloc's, one by one:
#   - libfitalloc.so exports all 20 (8 new: plain/array x plain/nothrow/aligned/aligned+nothrow;
#     12 delete: plain, nothrow, sized, aligned, sized+aligned, aligned+nothrow, each also [])
#     (nm -D --defined-only);
#   - a C++ program run with LD_PRELOAD calls each form explicitly, and the dynamic linker binds
#     every one of its references to libfitalloc (LD_DEBUG=bindings), not to libstdc++;
#   - each call is served by fitalloc: fa_stats_get (found with dlsym) counts exactly one more
#     allocation after each new and one more free after each delete, and fa_malloc_usable_size
#     accepts the block (it aborts on a pointer fitalloc does not own);
#   - the new-handler loop: a handler that counts its calls, frees a reserve block and uninstalls
#     itself at the third call is called exactly 3 times, then the throwing forms throw
#     std::bad_alloc and the nothrow forms return nullptr; a handler that throws std::bad_alloc
#     makes the nothrow forms return nullptr (they must not let the exception out: they are
#     noexcept).
# The same program also runs without fitalloc, as a check of the checks (fitalloc-only checks off).
source "$(dirname "${BASH_SOURCE[0]}")/../override/common.sh"
need_env CXX FITALLOC_INCLUDE
make_workdir

symbols=$(nm -D --defined-only "$FITALLOC_LIB") || fail "nm -D $FITALLOC_LIB"
grep -Eq ' T malloc$' <<<"$symbols" || { echo "no interposition layer in $FITALLOC_LIB: skipped"; exit 77; }

forms=(
    _Znwm _Znam _ZnwmRKSt9nothrow_t _ZnamRKSt9nothrow_t
    _ZnwmSt11align_val_t _ZnamSt11align_val_t
    _ZnwmSt11align_val_tRKSt9nothrow_t _ZnamSt11align_val_tRKSt9nothrow_t
    _ZdlPv _ZdaPv _ZdlPvRKSt9nothrow_t _ZdaPvRKSt9nothrow_t
    _ZdlPvm _ZdaPvm _ZdlPvSt11align_val_t _ZdaPvSt11align_val_t
    _ZdlPvmSt11align_val_t _ZdaPvmSt11align_val_t
    _ZdlPvSt11align_val_tRKSt9nothrow_t _ZdaPvSt11align_val_tRKSt9nothrow_t
)
missing=()
for s in "${forms[@]}"; do
    grep -Eq " [TW] $s(@.*)?$" <<<"$symbols" || missing+=("$s")
done
((${#missing[@]} == 0)) || fail "$FITALLOC_LIB does not export: ${missing[*]}"
echo "exported: all ${#forms[@]} operator new/delete forms"

cat >"$WORK/prog.cpp" <<'CPPEOF'
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <initializer_list>
#include <new>

#include "fitalloc-stats.h"

static int failures = 0;
#define EXPECT(c)                                                                                  \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            std::fprintf(stderr, "FAIL line %d: %s [%s]\n", __LINE__, #c, what);                   \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

typedef int (*stats_fn)(struct fa_stats *);
typedef size_t (*usable_fn)(const void *);
static stats_fn stats_get;  // fitalloc's, or NULL without it
static usable_fn usable_size;

// Keep the compiler from pairing up and removing a new and its delete.
static inline void escape(void *p) { asm volatile("" : : "g"(p) : "memory"); }

struct counts {
    uint64_t allocs, frees;
};
static counts snap()
{
    counts c = {0, 0};
    if (stats_get) {
        static struct fa_stats s;  // static: nothing on the stack that big, nothing allocated
        s.size = sizeof s;
        if (stats_get(&s) == 0)
            c = {s.allocs, s.frees};
    }
    return c;
}

enum nform { N_PLAIN, N_ARRAY, N_NT, N_ARRAY_NT, N_AL, N_ARRAY_AL, N_AL_NT, N_ARRAY_AL_NT };
enum dform { D_PLAIN, D_ARRAY, D_NT, D_ARRAY_NT, D_SIZED, D_ARRAY_SIZED, D_AL, D_ARRAY_AL,
             D_SIZED_AL, D_ARRAY_SIZED_AL, D_AL_NT, D_ARRAY_AL_NT };

static void *do_new(nform f, size_t n, size_t al)
{
    std::align_val_t a = std::align_val_t(al);
    switch (f) {
    case N_PLAIN: return ::operator new(n);
    case N_ARRAY: return ::operator new[](n);
    case N_NT: return ::operator new(n, std::nothrow);
    case N_ARRAY_NT: return ::operator new[](n, std::nothrow);
    case N_AL: return ::operator new(n, a);
    case N_ARRAY_AL: return ::operator new[](n, a);
    case N_AL_NT: return ::operator new(n, a, std::nothrow);
    case N_ARRAY_AL_NT: return ::operator new[](n, a, std::nothrow);
    }
    return nullptr;
}

static void do_delete(dform f, void *p, size_t n, size_t al)
{
    std::align_val_t a = std::align_val_t(al);
    switch (f) {
    case D_PLAIN: ::operator delete(p); break;
    case D_ARRAY: ::operator delete[](p); break;
    case D_NT: ::operator delete(p, std::nothrow); break;
    case D_ARRAY_NT: ::operator delete[](p, std::nothrow); break;
    case D_SIZED: ::operator delete(p, n); break;
    case D_ARRAY_SIZED: ::operator delete[](p, n); break;
    case D_AL: ::operator delete(p, a); break;
    case D_ARRAY_AL: ::operator delete[](p, a); break;
    case D_SIZED_AL: ::operator delete(p, n, a); break;
    case D_ARRAY_SIZED_AL: ::operator delete[](p, n, a); break;
    case D_AL_NT: ::operator delete(p, a, std::nothrow); break;
    case D_ARRAY_AL_NT: ::operator delete[](p, a, std::nothrow); break;
    }
}

// Each delete form with a new form it may release (every new form appears).
static const struct {
    dform d;
    nform n;
    bool aligned;
    const char *name;
} pairs[] = {
    {D_PLAIN, N_PLAIN, false, "new / delete"},
    {D_ARRAY, N_ARRAY, false, "new[] / delete[]"},
    {D_NT, N_NT, false, "new(nothrow) / delete(nothrow)"},
    {D_ARRAY_NT, N_ARRAY_NT, false, "new[](nothrow) / delete[](nothrow)"},
    {D_SIZED, N_PLAIN, false, "new / delete(size)"},
    {D_ARRAY_SIZED, N_ARRAY, false, "new[] / delete[](size)"},
    {D_AL, N_AL, true, "new(align) / delete(align)"},
    {D_ARRAY_AL, N_ARRAY_AL, true, "new[](align) / delete[](align)"},
    {D_SIZED_AL, N_AL_NT, true, "new(align, nothrow) / delete(size, align)"},
    {D_ARRAY_SIZED_AL, N_ARRAY_AL_NT, true, "new[](align, nothrow) / delete[](size, align)"},
    {D_AL_NT, N_AL, true, "new(align) / delete(align, nothrow)"},
    {D_ARRAY_AL_NT, N_ARRAY_AL, true, "new[](align) / delete[](align, nothrow)"},
};

static int handler_calls;
static void *reserve;
static void counting_handler()
{
    handler_calls++;
    if (reserve) {  // what a real handler does: give memory back, then let new try again
        ::operator delete(reserve);
        reserve = nullptr;
    }
    if (handler_calls == 3)
        std::set_new_handler(nullptr);
}

static void throwing_handler()
{
    handler_calls++;
    throw std::bad_alloc();
}

int main(int argc, char **argv)
{
    bool reference = argc > 1 && std::strcmp(argv[1], "--reference") == 0;
    const char *what = "setup";
    stats_get = (stats_fn)dlsym(RTLD_DEFAULT, "fa_stats_get");
    usable_size = (usable_fn)dlsym(RTLD_DEFAULT, "fa_malloc_usable_size");
    if (reference) {
        stats_get = nullptr;
        usable_size = nullptr;
    } else {
        EXPECT(stats_get != nullptr && usable_size != nullptr);
        if (!stats_get || !usable_size)
            return 1;
    }

    static const size_t sizes[] = {24, 1000, 20000, 300000};
    static const size_t aligns[] = {64, 4096, 64, 1 << 20};
    // A large block's free starts the purge thread, whose creation allocates: not in a count.
    void *warm = std::malloc(4 << 20);
    escape(warm);
    std::free(warm);
    for (const auto &pr : pairs) {
        what = pr.name;
        for (int k = 0; k < 4; k++) {
            size_t n = sizes[k], al = pr.aligned ? aligns[k] : 0;
            counts c0 = snap();
            void *p = do_new(pr.n, n, al);
            counts c1 = snap();
            escape(p);
            EXPECT(p != nullptr);
            if (!p)
                continue;
            EXPECT(reinterpret_cast<uintptr_t>(p) % (al ? al : 16) == 0);
            std::memset(p, 0xa5, n);
            if (stats_get) {
                EXPECT(c1.allocs == c0.allocs + 1);  // served by fitalloc
                EXPECT(c1.frees == c0.frees);
                EXPECT(usable_size(p) >= n);  // fitalloc's block (else it aborts)
            }
            c0 = snap();
            do_delete(pr.d, p, n, al);
            c1 = snap();
            if (stats_get) {
                EXPECT(c1.frees == c0.frees + 1);  // released by fitalloc
                EXPECT(c1.allocs == c0.allocs);
            }
        }
    }

    // The new-handler loop, for every form; sizes no allocator can serve.
    volatile size_t huge = SIZE_MAX / 2;
    static const nform all[] = {N_PLAIN, N_ARRAY, N_NT, N_ARRAY_NT,
                                N_AL, N_ARRAY_AL, N_AL_NT, N_ARRAY_AL_NT};
    static const char *const names[] = {"new", "new[]", "new(nothrow)", "new[](nothrow)",
                                        "new(align)", "new[](align)", "new(align, nothrow)",
                                        "new[](align, nothrow)"};
    for (int i = 0; i < 8; i++) {
        nform f = all[i];
        bool nothrow = f == N_NT || f == N_ARRAY_NT || f == N_AL_NT || f == N_ARRAY_AL_NT;
        what = names[i];
        for (size_t n : {(size_t)huge, (size_t)1 << 62}) {
            reserve = ::operator new(1000);
            handler_calls = 0;
            std::set_new_handler(counting_handler);
            bool threw = false;
            void *p = reinterpret_cast<void *>(1);
            counts c0 = snap();
            try {
                p = do_new(f, n, 64);
                escape(p);
            } catch (const std::bad_alloc &) {
                threw = true;
            }
            counts c1 = snap();
            EXPECT(handler_calls == 3);
            EXPECT(reserve == nullptr);
            EXPECT(std::get_new_handler() == nullptr);
            if (nothrow)
                EXPECT(!threw && p == nullptr);
            else
                EXPECT(threw && p == reinterpret_cast<void *>(1));
            // The reserve was freed; a thrown bad_alloc was allocated and freed by the C++
            // runtime (through malloc and free, so fitalloc counts it too). A nothrow form
            // reaches the runtime's own, which calls the throwing form and catches its
            // bad_alloc: one allocation there as well.
            if (stats_get)
                EXPECT(c1.frees - c0.frees == 1 + (c1.allocs - c0.allocs) &&
                       c1.allocs - c0.allocs == 1);
            std::set_new_handler(nullptr);
            if (reserve)
                ::operator delete(reserve);
            reserve = nullptr;
        }
        if (nothrow) { // a handler that throws: the noexcept forms still return nullptr
            handler_calls = 0;
            std::set_new_handler(throwing_handler);
            void *p = reinterpret_cast<void *>(1);
            try {
                p = do_new(f, (size_t)huge, 64);
            } catch (...) {
                std::fprintf(stderr, "FAIL: %s let the new-handler's exception out\n", what);
                failures++;
            }
            std::set_new_handler(nullptr);
            EXPECT(handler_calls == 1);
            EXPECT(p == nullptr);
        }
    }

    // New-expressions pick the forms themselves (sized and aligned delete included).
    struct alignas(128) Big {
        char c[200];
    };
    what = "new-expressions";
    for (int i = 0; i < 100; i++) {
        counts c0 = snap();
        int *a = new int[10 + i];
        Big *b = new Big;
        Big *arr = new Big[3];
        long *l = new long(i);
        escape(a), escape(b), escape(arr), escape(l);
        counts c1 = snap();
        EXPECT(reinterpret_cast<uintptr_t>(b) % 128 == 0);
        EXPECT(reinterpret_cast<uintptr_t>(arr) % 128 == 0);
        if (stats_get)
            EXPECT(c1.allocs == c0.allocs + 4);
        delete[] a;
        delete b;
        delete[] arr;
        delete l;
        counts c2 = snap();
        if (stats_get)
            EXPECT(c2.frees == c1.frees + 4);
    }
    std::printf("%s: %d failures\n", reference ? "reference" : "fitalloc", failures);
    return failures ? 1 : 0;
}
CPPEOF

"$CXX" -std=c++17 -O2 -fsized-deallocation -faligned-new -I"$FITALLOC_INCLUDE" \
    -o "$WORK/prog" "$WORK/prog.cpp" -ldl 2>"$WORK/cc.err" ||
    { cat "$WORK/cc.err" >&2; fail "compiling the C++ program"; }

# The program references every form (else the bindings check below proves nothing).
undef=$(nm -D --undefined-only "$WORK/prog") || fail "nm -D prog"
for s in "${forms[@]}"; do
    grep -Eq " $s(@.*)?$" <<<"$undef" || fail "the test program does not reference $s"
done

run_ok "prog without fitalloc" "$WORK/prog" --reference >"$WORK/ref.out"

rc=0
LD_PRELOAD="$FITALLOC_LIB" LD_DEBUG=bindings LD_DEBUG_OUTPUT="$WORK/ld" "$WORK/prog" \
    >"$WORK/pre.out" 2>"$WORK/pre.err" || rc=$?
cat "$WORK/ld".* >"$WORK/bindings.txt" 2>/dev/null || fail "no LD_DEBUG output"
libname=$(basename "$FITALLOC_LIB")
wrong=()
for s in "${forms[@]}"; do
    line=$(grep -F "binding file $WORK/prog [0] to " "$WORK/bindings.txt" | grep -F "symbol \`$s'" |
        head -n 1 || true)
    [[ -n "$line" ]] || { wrong+=("$s: no binding"); continue; }
    [[ "$line" == *"/$libname "* ]] || wrong+=("$s: ${line#*binding file }")
done
((${#wrong[@]} == 0)) || { printf '  %s\n' "${wrong[@]}" >&2; fail "operators not bound to fitalloc"; }
echo "bound: every form the program calls is libfitalloc's"
((rc == 0)) || { cat "$WORK/pre.out" "$WORK/pre.err" >&2; fail "the C++ program under LD_PRELOAD failed ($rc)"; }
echo "override/cxx_operators: ok (20 forms exported, bound and served by fitalloc; new-handler loop)"

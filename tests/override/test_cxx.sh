# A C++17 program (new/delete, new[]/delete[], sized and aligned new, nothrow
# new, bad_alloc, containers, threads) gives the same checksum with and
# without LD_PRELOAD=libfitalloc.so and when linked directly with -lfitalloc;
# its own alignment and content checks pass; FITALLOC_STATS=1 shows > 10000
# allocations.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
need_env CXX
make_workdir

cat >"$WORK/prog.cpp" <<'CPPEOF'
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

static int failures = 0;
#define EXPECT(c)                                                              \
    do {                                                                       \
        if (!(c)) {                                                            \
            std::fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c); \
            failures++;                                                        \
        }                                                                      \
    } while (0)

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = static_cast<const unsigned char *>(p);
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}
static uint64_t fnv_u(uint64_t h, uint64_t v) { return fnv(h, &v, sizeof v); }

struct alignas(64) A64 { char c[100]; int v; };
struct alignas(4096) APage { int v; char pad[5000]; };
struct Obj { int a; double b; std::string s; Obj(int x) : a(x), b(x * 0.5), s(std::to_string(x)) {} };

static uint64_t churn(uint64_t seed, int rounds) {
    uint64_t h = 1469598103934665603ull;
    uint64_t x = seed;
    auto rnd = [&x]() { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x; };
    std::map<int, std::string> m;
    std::unordered_map<std::string, std::vector<int>> um;
    std::vector<std::string> vs;
    for (int r = 0; r < rounds; r++) {
        int k = (int)(rnd() % 5000);
        m[k] = std::string((size_t)(rnd() % 200), (char)('a' + k % 26));
        if (rnd() % 3 == 0) m.erase((int)(rnd() % 5000));
        std::string key = "key" + std::to_string(rnd() % 3000);
        auto &v = um[key];
        v.resize((size_t)(rnd() % 64), k);
        if (rnd() % 4 == 0) um.erase("key" + std::to_string(rnd() % 3000));
        vs.push_back(std::string((size_t)(rnd() % 100), 'z'));
        if (vs.size() > 1000) { vs.erase(vs.begin(), vs.begin() + 500); vs.shrink_to_fit(); }
    }
    for (auto &kv : m) { h = fnv_u(h, (uint64_t)kv.first); h = fnv(h, kv.second.data(), kv.second.size()); }
    uint64_t sum = 0;
    for (auto &kv : um) { sum += std::hash<std::string>{}(kv.first) % 1000003 * kv.second.size(); for (int i : kv.second) sum += (uint64_t)i; }
    h = fnv_u(h, sum);
    for (auto &s : vs) h = fnv_u(h, s.size());
    return h;
}

int main(int argc, char **argv) {
    uint64_t h = 1469598103934665603ull;
    int scale = argc > 1 ? std::atoi(argv[1]) : 1;

    // plain new/delete, new[]/delete[] (sized delete is used for complete types)
    for (int i = 0; i < 20000 * scale; i++) {
        int *p = new int(i);
        Obj *o = new Obj(i);
        char *a = new char[(size_t)(i % 700) + 1];
        std::memset(a, i & 0xff, (size_t)(i % 700) + 1);
        EXPECT(*p == i && o->a == i && o->s == std::to_string(i));
        EXPECT((unsigned char)a[(size_t)(i % 700)] == (unsigned char)(i & 0xff));
        h = fnv_u(h, (uint64_t)(*p + o->a + (int)o->s.size()));
        delete p;
        delete o;
        delete[] a;
        Obj *arr = static_cast<Obj *>(::operator new(sizeof(Obj) * 3));
        ::operator delete(arr, sizeof(Obj) * 3); // explicit sized delete
    }
    // aligned new
    for (int i = 0; i < 2000; i++) {
        A64 *a = new A64();
        EXPECT(reinterpret_cast<uintptr_t>(a) % 64 == 0);
        a->v = i;
        A64 *arr = new A64[(size_t)(i % 9) + 1];
        EXPECT(reinterpret_cast<uintptr_t>(arr) % 64 == 0);
        arr[i % 9].v = i;
        h = fnv_u(h, (uint64_t)(a->v + arr[i % 9].v));
        delete a;
        delete[] arr;
        if (i % 50 == 0) {
            APage *pg = new APage();
            EXPECT(reinterpret_cast<uintptr_t>(pg) % 4096 == 0);
            pg->v = i;
            delete pg;
            void *q = ::operator new(300, std::align_val_t(256));
            EXPECT(reinterpret_cast<uintptr_t>(q) % 256 == 0);
            ::operator delete(q, 300, std::align_val_t(256));
        }
    }
    // nothrow new
    char *nt = new (std::nothrow) char[1000];
    EXPECT(nt != nullptr);
    delete[] nt;
    volatile size_t huge = (size_t)1 << 62;
    char *nh = new (std::nothrow) char[huge];
    EXPECT(nh == nullptr);
    A64 *na = new (std::nothrow) A64;
    EXPECT(na != nullptr && reinterpret_cast<uintptr_t>(na) % 64 == 0);
    delete na;
    bool threw = false;
    try {
        char *b = new char[huge];
        b[0] = 1;
        delete[] b;
    } catch (const std::bad_alloc &) {
        threw = true;
    }
    EXPECT(threw);

    // containers, also on other threads
    h = fnv_u(h, churn(1, 20000 * scale));
    uint64_t t1 = 0, t2 = 0;
    std::thread a([&] { t1 = churn(2, 15000 * scale); });
    std::thread b([&] { t2 = churn(3, 15000 * scale); });
    a.join();
    b.join();
    h = fnv_u(fnv_u(h, t1), t2);
    auto sp = std::make_shared<std::vector<std::string>>(1000, "shared");
    h = fnv_u(h, sp->size() * sp->at(999).size());

    std::printf("checksum %016llx\n", (unsigned long long)h);
    return failures ? 1 : 0;
}
CPPEOF

"$CXX" -std=c++17 -O2 -pthread -o "$WORK/prog" "$WORK/prog.cpp" 2>"$WORK/cc.err" ||
    { cat "$WORK/cc.err" >&2; fail "compiling the C++ program"; }
libdir=$(dirname "$FITALLOC_LIB")
"$CXX" -std=c++17 -O2 -pthread -o "$WORK/prog_linked" "$WORK/prog.cpp" \
    -L"$libdir" -lfitalloc -Wl,-rpath,"$libdir" 2>"$WORK/cc.err" ||
    { cat "$WORK/cc.err" >&2; fail "linking the C++ program with -lfitalloc"; }
# (output to a file first: with pipefail, grep -q quitting early fails the pipe)
ldd "$WORK/prog_linked" >"$WORK/ldd.txt" || fail "ldd prog_linked failed"
grep -q libfitalloc "$WORK/ldd.txt" || fail "prog_linked does not load libfitalloc: $(cat "$WORK/ldd.txt")"

scale=$(test_scale)
run_ok "prog (libc)" "$WORK/prog" "$scale" >"$WORK/ref.txt"
grep -q '^checksum ' "$WORK/ref.txt" || fail "no checksum without fitalloc"

LD_PRELOAD="$FITALLOC_LIB" FITALLOC_STATS=1 "$WORK/prog" "$scale" >"$WORK/pre.txt" 2>"$WORK/pre.err" ||
    { tail -n 40 "$WORK/pre.err" >&2; fail "prog under LD_PRELOAD failed"; }
cmp "$WORK/ref.txt" "$WORK/pre.txt" || fail "checksum differs under LD_PRELOAD"
assert_allocs_gt "$WORK/pre.err" 10000 "C++ program (LD_PRELOAD)"

FITALLOC_STATS=1 "$WORK/prog_linked" "$scale" >"$WORK/linked.txt" 2>"$WORK/linked.err" ||
    { tail -n 40 "$WORK/linked.err" >&2; fail "prog linked with -lfitalloc failed"; }
cmp "$WORK/ref.txt" "$WORK/linked.txt" || fail "checksum differs when linked with -lfitalloc"
assert_allocs_gt "$WORK/linked.err" 10000 "C++ program (-lfitalloc)"
echo "override/cxx: ok ($(cat "$WORK/ref.txt"))"

# Real programs under LD_PRELOAD=libfitalloc.so with FITALLOC_MODE=lab give the same output as
# without fitalloc, under every placement policy (sort of a generated file, python3 building and
# sorting a dict, a small threaded C++ program), under every lock mode and with the list index;
# the lab's report (FITALLOC_STATS=1) shows the allocations were the lab's, and its heaps pass
# the checker at exit (FITALLOC_LAB_CHECK=1 runs it and prints how many heaps it checked; a broken
# heap would abort: lab/check_at_exit). FITALLOC_LAB_HIST exercises the histogram file too.
source "$(dirname "${BASH_SOURCE[0]}")/../override/common.sh"
need_env CXX
make_workdir
export LC_ALL=C

# Without the interposition layer (FITALLOC_OVERRIDE=OFF) LD_PRELOAD changes nothing.
symbols=$(nm -D --defined-only "$FITALLOC_LIB") || fail "nm $FITALLOC_LIB"
grep -Eq ' T malloc$' <<<"$symbols" || { echo "no malloc in $FITALLOC_LIB: skipped"; exit 77; }

scale=$(test_scale)

# Largest N on the lab report's "  mallocs: N" lines of file $1.
lab_mallocs() {
    grep -E '^  mallocs: [0-9]+$' "$1" | sed -E 's/^  mallocs: //' | sort -n | tail -n 1
}

# run_lab NAME MIN-MALLOCS REFERENCE-OUTPUT COMMAND...: run under the lab with the FITALLOC_*
# variables already exported by the caller, compare stdout with the reference, check the report.
run_lab() {
    local name=$1 min=$2 ref=$3
    shift 3
    local out="$WORK/$name.out" err="$WORK/$name.err"
    if ! LD_PRELOAD="$FITALLOC_LIB" FITALLOC_MODE=lab FITALLOC_STATS=1 FITALLOC_LAB_CHECK=1 \
        FITALLOC_LAB_HIST="$WORK/$name.hist" "$@" >"$out" 2>"$err"; then
        tail -n 40 "$err" >&2
        fail "$name: failed under the lab"
    fi
    cmp "$ref" "$out" || fail "$name: output differs under the lab"
    grep -q '^fitalloc: lab statistics' "$err" || {
        tail -n 20 "$err" >&2
        fail "$name: no lab report: did the allocations reach the lab?"
    }
    local n
    n=$(lab_mallocs "$err")
    [ -n "$n" ] && [ "$n" -gt "$min" ] || fail "$name: lab report shows '${n:-no}' mallocs, expected > $min"
    grep -Eq '^fitalloc: lab: [1-9][0-9]* heap\(s\) checked at exit: sound$' "$err" ||
        fail "$name: no line of the heap check at exit: $(grep -m 3 'fitalloc: lab' "$err")"
    [ -s "$WORK/$name.hist" ] || fail "$name: no histogram file"
    awk 'NF != 2 || $1 !~ /^[0-9]+$/ || $2 !~ /^[0-9]+$/ { bad = 1 } END { exit bad }' \
        "$WORK/$name.hist" || fail "$name: histogram lines are not 'size count'"
    echo "$name: ok ($n mallocs)"
}

# ---- the programs and their reference outputs ----

lines=$((100000 * scale))
word_lines "$lines" 20240917 >"$WORK/in.txt" || fail "generating the input"
sort_args=(-k2,2 -k1,1n --parallel=2 -S 512K -T "$WORK")
run_ok "sort (libc)" sort "${sort_args[@]}" -o "$WORK/sort.ref" "$WORK/in.txt"

have_python=0
if command -v python3 >/dev/null; then
    have_python=1
    PY=$(python3 -c 'import sys; print(sys.executable)')
    cat >"$WORK/prog.py" <<'PYEOF'
import hashlib, sys
n = int(sys.argv[1])
d = {}
for i in range(n):
    d["k%08d" % ((i * 7919) % n)] = [i] * (i % 7)
for i in range(0, n, 3):
    del d["k%08d" % i]
items = sorted(d.items(), key=lambda kv: kv[0][::-1])
h = hashlib.sha256("\n".join("%s=%d" % (k, len(v)) for k, v in items).encode())
print(len(d), h.hexdigest())
PYEOF
    pyn=$((100000 * scale))
    run_ok "python3 (libc)" "$PY" "$WORK/prog.py" "$pyn" >"$WORK/py.ref"
fi

cat >"$WORK/prog.cpp" <<'CPPEOF'
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

static uint64_t work(uint64_t seed, int rounds)
{
    uint64_t x = seed, h = 1469598103934665603ull;
    std::map<int, std::string> m;
    std::unordered_map<std::string, std::vector<int>> u;
    std::vector<std::unique_ptr<std::string>> owned;
    for (int r = 0; r < rounds; r++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int k = (int)(x % 4000);
        m[k] = std::string((size_t)(x % 300), (char)('a' + k % 26));
        if (x % 3 == 0) m.erase((int)((x >> 8) % 4000));
        u["k" + std::to_string(x % 2000)].resize((size_t)(x % 50), k);
        owned.emplace_back(new std::string((size_t)(x % 100), 'z'));
        if (owned.size() > 500) owned.erase(owned.begin(), owned.begin() + 250);
    }
    for (auto &kv : m) h = (h ^ (uint64_t)kv.first ^ kv.second.size()) * 1099511628211ull;
    for (auto &kv : u) h ^= kv.second.size() * 31 + kv.first.size();
    return h;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? std::atoi(argv[1]) : 20000;
    uint64_t a = 0, b = 0, c = work(1, rounds);
    std::thread t1([&] { a = work(2, rounds); });
    std::thread t2([&] { b = work(3, rounds); });
    t1.join();
    t2.join();
    std::printf("%016llx %016llx %016llx\n", (unsigned long long)a, (unsigned long long)b,
                (unsigned long long)c);
    return 0;
}
CPPEOF
"$CXX" -std=c++17 -O1 -pthread -o "$WORK/prog" "$WORK/prog.cpp" 2>"$WORK/cc.err" ||
    { cat "$WORK/cc.err" >&2; fail "compiling the C++ program"; }
rounds=$((20000 * scale))
run_ok "C++ program (libc)" "$WORK/prog" "$rounds" >"$WORK/cxx.ref"

# ---- every policy (global lock, tree index) ----

for policy in first next best worst segregated tlsf buddy slab; do
    export FITALLOC_POLICY=$policy
    run_lab "sort-$policy" 100 "$WORK/sort.ref" sort "${sort_args[@]}" "$WORK/in.txt"
    if ((have_python)); then
        run_lab "python-$policy" 1000 "$WORK/py.ref" "$PY" "$WORK/prog.py" "$pyn"
    fi
    run_lab "cxx-$policy" 50000 "$WORK/cxx.ref" "$WORK/prog" "$rounds"
done

# ---- every lock mode, coalescing off, the list index ----

export FITALLOC_POLICY=best
for lock in thread arenas; do
    export FITALLOC_LOCK=$lock
    run_lab "sort-$lock" 100 "$WORK/sort.ref" sort "${sort_args[@]}" "$WORK/in.txt"
    run_lab "cxx-$lock" 50000 "$WORK/cxx.ref" "$WORK/prog" "$rounds"
done
export FITALLOC_LOCK=global
FITALLOC_LAB_COALESCE=0 run_lab "cxx-nocoalesce" 50000 "$WORK/cxx.ref" "$WORK/prog" "$rounds"
FITALLOC_LAB_INDEX=list run_lab "cxx-list" 50000 "$WORK/cxx.ref" "$WORK/prog" "$rounds"
FITALLOC_LAB_DIRECT=64K run_lab "sort-direct" 100 "$WORK/sort.ref" sort "${sort_args[@]}" \
    "$WORK/in.txt"
echo "lab/programs: ok"

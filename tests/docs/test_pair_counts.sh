# The instructions per malloc + free pair that the docs quote, counted again the way
# bench/callgrind_pair.sh counts them (bench/workloads/pair.c at -O2 under callgrind with the
# library preloaded, (Ir(2N) - Ir(N)) / N, minus the same loop with do-nothing stand-ins) for
# 16-byte blocks: the default mode's, in the README ("fitalloc 38 at 16-128 B") and in
# docs/security.md ("**38** at 16-128 bytes", "against 38"), within one instruction, and secure
# mode's ("about 490 instructions"), within 3 %. The counts are the Release build's: under another
# build type the test says so and is skipped.
set -euo pipefail
src=${FITALLOC_SOURCE_DIR:?FITALLOC_SOURCE_DIR is not set}
lib=${FITALLOC_LIB:?FITALLOC_LIB is not set}
build=${FITALLOC_BUILD_DIR:?FITALLOC_BUILD_DIR is not set}

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
if [[ "$type" != Release ]]; then
    echo "skipped: the docs quote the Release build's counts; this build is '${type:-none}'"
    exit 77
fi
command -v valgrind >/dev/null || fail "valgrind not found (apt-get install valgrind)"

work=$(mktemp -d "${TMPDIR:-/tmp}/fitalloc-pair-counts.XXXXXX")
trap 'rm -rf "$work"' EXIT
"${CC:-cc}" -std=c11 -O2 -fno-builtin-malloc -fno-builtin-free -o "$work/pair" \
    "$src/bench/workloads/pair.c" || fail "compiling bench/workloads/pair.c"

n=100000
# ir <tag> <settings...> -- <pair arguments...>: the instructions of one run under callgrind.
ir() {
    local tag=$1 settings=()
    shift
    while [[ $1 != -- ]]; do settings+=("$1"); shift; done
    shift
    env LD_PRELOAD="$lib" "${settings[@]}" valgrind --tool=callgrind -q \
        --callgrind-out-file="$work/$tag.cg" "$work/pair" "$@" >"$work/$tag.log" 2>&1 ||
        fail "pair $* under callgrind (${settings[*]}): $(head -c 300 "$work/$tag.log")"
    grep -q '^ok pair ' "$work/$tag.log" || fail "pair $*: $(head -c 300 "$work/$tag.log")"
    awk '/^(summary|totals):/ { print $2; exit }' "$work/$tag.cg"
}
# per_pair <tag> <settings...>: instructions per pair of 16 bytes, the loop's own taken off.
per_pair() {
    local tag=$1
    shift
    local a b base_a base_b
    a=$(ir "$tag.1" "$@" -- 16 "$n")
    b=$(ir "$tag.2" "$@" -- 16 $((2 * n)))
    base_a=$(ir "$tag.b1" "$@" -- 16 "$n" --baseline)
    base_b=$(ir "$tag.b2" "$@" -- 16 $((2 * n)) --baseline)
    awk -v a="$a" -v b="$b" -v c="$base_a" -v d="$base_b" -v n="$n" \
        'BEGIN { printf "%.1f", ((b - a) - (d - c)) / n }'
}
default=$(per_pair default FITALLOC_SECURE=0)
secure_lib=$(dirname "$lib")/$(basename "$lib" | sed 's/^libfitalloc/&-secure/')
secure=$(per_pair secure LD_PRELOAD="$secure_lib" FITALLOC_SECURE=1)
echo "instructions per pair of 16 bytes: default mode $default, secure mode $secure"

flat() { tr '\n' ' ' <"$1" | tr -s ' '; }
# near <claim> <count> <tolerance>: |claim - count| <= tolerance
near() { awk -v c="$1" -v m="$2" -v t="$3" 'BEGIN { d = c - m; exit !(d <= t && -d <= t) }'; }

claim=$(flat "$src/README.md" | sed -nE 's/.*fitalloc ([0-9.]+) at 16-128 B.*/\1/p')
[[ -n "$claim" ]] || fail "README.md: no 'fitalloc N at 16-128 B'"
near "$claim" "$default" 1 || fail "README.md says $claim instructions a pair at 16 B; $default counted"

claim=$(flat "$src/docs/security.md" | sed -nE 's/.*\*\*([0-9.]+)\*\* at 16-128 bytes.*/\1/p')
[[ -n "$claim" ]] || fail "docs/security.md: no '**N** at 16-128 bytes'"
near "$claim" "$default" 1 ||
    fail "docs/security.md says $claim instructions a pair at 16 B; $default counted"

pair=$(flat "$src/docs/security.md" |
    sed -nE 's/.*a pair of 16 bytes is about ([0-9.]+) instructions against ([0-9.]+).*/\1 \2/p')
[[ -n "$pair" ]] || fail "docs/security.md: no 'a pair of 16 bytes is about N instructions against M'"
read -r claim_secure claim_default <<<"$pair"
near "$claim_default" "$default" 1 ||
    fail "docs/security.md says secure mode's pair is against $claim_default; $default counted"
tolerance=$(awk -v s="$secure" 'BEGIN { print s * 0.03 }')
near "$claim_secure" "$secure" "$tolerance" ||
    fail "docs/security.md says about $claim_secure instructions in secure mode; $secure counted"
echo "docs/pair_counts: ok"

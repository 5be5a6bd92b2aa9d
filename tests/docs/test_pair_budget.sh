# The instruction budget of a malloc + free pair, kept in bench/pair-budget.txt: for every line
# there (allocator, size, budget), bench/callgrind_pair.sh counts the pair against the library
# under test, and the test fails when the count exceeds the budget by more than 0.5. No
# document is read. The budget is the Release build's: under another build type the test says
# so and is skipped.
set -euo pipefail
src=${FITALLOC_SOURCE_DIR:?FITALLOC_SOURCE_DIR is not set}
lib=${FITALLOC_LIB:?FITALLOC_LIB is not set}
build=${FITALLOC_BUILD_DIR:?FITALLOC_BUILD_DIR is not set}
margin=0.5

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
if [[ "$type" != Release ]]; then
    echo "skipped: the budget is the Release build's; this build is '${type:-none}'"
    exit 77
fi
command -v valgrind >/dev/null || fail "valgrind not found (apt-get install valgrind)"

budgets=$(grep -v '^[[:space:]]*\(#\|$\)' "$src/bench/pair-budget.txt") ||
    fail "bench/pair-budget.txt holds no budget"
# The bench's workloads are built once, beside the test, and kept for the next run.
bench_build=$PWD/pair-budget-build
status=0
while read -r alloc size budget; do
    [[ -n "$budget" ]] || fail "bench/pair-budget.txt: '$alloc $size' has no budget"
    out=$(bash "$src/bench/callgrind_pair.sh" -a "$alloc" -s "$size" --fitalloc "$lib" \
        --build-dir "$bench_build" 2>&1) || fail "bench/callgrind_pair.sh -a $alloc -s $size: $out"
    count=$(awk -v a="$alloc" '$1 == a { print $3; exit }' <<<"$out")
    [[ "$count" =~ ^[0-9]+(\.[0-9]+)?$ ]] ||
        fail "bench/callgrind_pair.sh gave no count for $alloc at $size B: $out"
    if awk -v c="$count" -v b="$budget" -v m="$margin" 'BEGIN { exit !(c > b + m) }'; then
        echo "FAIL: $alloc: $count instructions a pair at $size B, budget $budget (+$margin)" >&2
        status=1
    else
        echo "$alloc: $count instructions a pair at $size B, budget $budget (+$margin)"
    fi
done <<<"$budgets"
exit "$status"

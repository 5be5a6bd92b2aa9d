# The README's count of the tests the aarch64 stage runs under qemu-user ("runs N of its M
# tests") is computed again: M compiled tests (tests/<area>/test_*.c and .cpp, what a cross build
# registers), N of them not named in tests/qemu-excluded.txt. Every name there must be such a
# test, and the README must say exactly these numbers.
set -euo pipefail
src=${FITALLOC_SOURCE_DIR:?FITALLOC_SOURCE_DIR is not set}
cd "$src"

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

mapfile -t compiled < <(find tests -mindepth 2 -maxdepth 2 -name 'test_*.c' -o -mindepth 2 \
    -maxdepth 2 -name 'test_*.cpp' | sed -E 's#^tests/([^/]+)/test_(.*)\.(c|cpp)$#\1/\2#' | sort)
mapfile -t excluded < <(sed 's/#.*//' tests/qemu-excluded.txt | awk 'NF { print $1 }' | sort)
((${#compiled[@]} > 0)) || fail "no compiled test found under tests/"
# A lookup table, not a pipe into grep -q: under pipefail, grep leaving at its first match can
# fail the printf before it (SIGPIPE), which read as "not found" now and then.
declare -A is_compiled
for name in "${compiled[@]}"; do
    is_compiled[$name]=1
done
for name in "${excluded[@]}"; do
    [[ -n "${is_compiled[$name]:-}" ]] ||
        fail "tests/qemu-excluded.txt names '$name', which is not a compiled test"
done
dups=$(printf '%s\n' "${excluded[@]}" | uniq -d)
[[ -z "$dups" ]] || fail "tests/qemu-excluded.txt names twice: $dups"

total=${#compiled[@]}
run=$((total - ${#excluded[@]}))
claim=$(tr '\n' ' ' <README.md | grep -oE 'runs [0-9]+ of +its [0-9]+ tests under qemu-user') ||
    fail "README.md has no 'runs N of its M tests under qemu-user'"
[[ "$claim" =~ runs\ ([0-9]+)\ of\ +its\ ([0-9]+)\ tests ]]
[[ "${BASH_REMATCH[1]}" == "$run" && "${BASH_REMATCH[2]}" == "$total" ]] ||
    fail "README.md says '$claim'; the tree has $total compiled tests, $run of them not" \
        "excluded: 'runs $run of its $total tests under qemu-user'"
echo "docs/qemu_count: ok (the README's $run of $total)"

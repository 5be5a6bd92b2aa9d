#!/usr/bin/env bash
# ctest labels: structure
# The tests' folders mirror the code (tests/CMakeLists.txt): each folder of tests/ is a layer of
# src/, secure mode or meshing (the engine's modes), a top-level part with tests of its own
# (bench, command, replay, tools, docs, cmake), the shared helpers (common), or one of the three
# that cut across (fuzz, install, misuse); a folder by kind (threads/, errors/, ...) fails, and
# so does a "ctest labels:" line naming a kind not listed here. Each failure names its folder or
# file.
set -euo pipefail
src=${FITALLOC_SOURCE_DIR:?FITALLOC_SOURCE_DIR is not set}
root=${1:-$src} # the tree to check (the test checks this one)
parts=" secure mesh bench command replay tools docs cmake common fuzz install misuse "
kinds_known=" api unit errors integrity reliability threads walk symbols structure "

failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

cd "$root/tests"
for dir in */; do
    dir=${dir%/}
    [[ -d "$root/src/$dir" || "$parts" == *" $dir "* ]] ||
        fail "tests/$dir/ is no layer of src/ nor one of:$parts(tests/CMakeLists.txt)"
done
# As tests/CMakeLists.txt reads them: the first line with "ctest labels:", the words after it.
while IFS= read -r -d '' file; do
    line=$(grep -m1 'ctest labels:' "$file") || continue
    kinds=$(sed 's/.*ctest labels:\([a-z0-9_ ]*\).*/\1/' <<<"$line")
    for kind in $kinds; do
        [[ "$kinds_known" == *" $kind "* ]] ||
            fail "tests/${file#./}: unknown kind '$kind' (known:$kinds_known)"
    done
done < <(find . -name 'test_*' -type f -print0)

((failures == 0)) || exit 1
echo "tools/layout: ok"

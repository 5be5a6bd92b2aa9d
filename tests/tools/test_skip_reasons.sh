#!/usr/bin/env bash
# tools/skip-reasons.sh, as tools/test.sh uses it: a small ctest project with tests that pass,
# fail, skip with a reason, skip among other lines, and skip without a word, run with -j2;
# each skipped test, and only those, gets one line with the reason its output gave.
set -euo pipefail
work="$FITALLOC_BUILD_DIR/tests/tools/skip-reasons"
rm -rf "$work"
mkdir -p "$work/src"
fail() {
    echo "FAIL: $*"
    exit 1
}

cat >"$work/src/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.25)
project(skips NONE)
enable_testing()
add_test(NAME area/passes COMMAND sh -c "echo 'all fine, nothing skipped'")
add_test(NAME area/fails COMMAND sh -c "echo 'a check failed: skip nothing'; exit 1")
add_test(NAME area/no_tool COMMAND sh -c "echo 'qemu-user is not installed (apt-get install qemu-user): skipped'; exit 77")
add_test(NAME other/among_lines COMMAND sh -c "echo 'building a helper'; echo 'no transparent huge pages in this kernel: skipped'; echo 'bye'; exit 77")
add_test(NAME other/silent COMMAND sh -c "exit 77")
add_test(NAME other/last_line COMMAND sh -c "echo 'first'; echo 'ptrace is not allowed here'; exit 77")
set_tests_properties(area/no_tool other/among_lines other/silent other/last_line
    PROPERTIES SKIP_RETURN_CODE 77)
EOF
cmake -S "$work/src" -B "$work/build" >"$work/configure.log" 2>&1 ||
    { cat "$work/configure.log"; fail "configuring the ctest project"; }
ctest --test-dir "$work/build" -j2 --output-on-failure >"$work/ctest.log" 2>&1 && fail "ctest passed with a failing test"

bash "$FITALLOC_SOURCE_DIR/tools/skip-reasons.sh" "$work/ctest.log" \
    "$work/build/Testing/Temporary/LastTest.log" >"$work/reasons" || fail "skip-reasons.sh failed"
sort "$work/reasons" >"$work/got"
cat >"$work/want" <<'EOF'
skipped: area/no_tool: qemu-user is not installed (apt-get install qemu-user): skipped
skipped: other/among_lines: no transparent huge pages in this kernel: skipped
skipped: other/last_line: ptrace is not allowed here
skipped: other/silent: (it printed no reason)
EOF
diff -u "$work/want" "$work/got" || fail "the reasons differ (above)"

# Nothing skipped: nothing printed.
ctest --test-dir "$work/build" -R passes >"$work/ctest-pass.log" 2>&1 || fail "ctest -R passes"
out=$(bash "$FITALLOC_SOURCE_DIR/tools/skip-reasons.sh" "$work/ctest-pass.log" \
    "$work/build/Testing/Temporary/LastTest.log") || fail "skip-reasons.sh failed without skips"
[[ -z "$out" ]] || fail "no test skipped, yet it printed: $out"

# Bad input: a clear message and a failure.
bash "$FITALLOC_SOURCE_DIR/tools/skip-reasons.sh" "$work/nonexistent" "$work/ctest.log" \
    >"$work/bad.out" 2>&1 && fail "a missing file was accepted"
grep -q "cannot read $work/nonexistent" "$work/bad.out" || fail "a missing file: $(cat "$work/bad.out")"
echo "skip reasons: ok"

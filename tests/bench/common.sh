# Helpers for the bench's tests (sourced; not a test itself): the source tree and the library
# from the test environment (tests/CMakeLists.txt), a scratch folder $work removed at exit,
# fail() that counts a failed check and goes on, and finish_checks() that ends the test.
# The test sets $test_name before sourcing this.
set -euo pipefail

src=${FITALLOC_SOURCE_DIR:?FITALLOC_SOURCE_DIR is not set}
lib=${FITALLOC_LIB:?FITALLOC_LIB is not set}
export CC=${CC:-cc}
work=$(mktemp -d "${TMPDIR:-/tmp}/fitalloc-$test_name.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
# The Python the tests run imports checks.py from here.
export PYTHONPATH="$src/tests/bench${PYTHONPATH:+:$PYTHONPATH}"

fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

# run_checks WHAT ARG...: the Python checks on standard input (checks.py's check and finish)
# run with ARG...; their output is shown and kept in $work/check.out; WHAT is the failure when
# one fails.
run_checks() {
    local what=$1 rc=0
    shift
    python3 - "$@" >"$work/check.out" || rc=$?
    cat "$work/check.out"
    ((rc == 0)) || fail "$what"
}

# compare_without_programs WHAT ARG...: bench/compare.py (the workloads built in $work/bin
# already) with ARG... and an empty PATH, as on a machine without the programs a study runs;
# its results in $work/missing, its output in $work/missing.out and .err. It must exit with 0.
compare_without_programs() {
    local what=$1 py rc=0
    shift
    py=$(python3 -c 'import sys; print(sys.executable)')
    mkdir -p "$work/empty-path"
    PATH=$work/empty-path "$py" "$src/bench/compare.py" --fitalloc "$lib" --build-dir "$work/bin" \
        "$@" --results "$work/missing" >"$work/missing.out" 2>"$work/missing.err" || rc=$?
    ((rc == 0)) || fail "$what: exit $rc (expected 0): $(tail -n 5 "$work/missing.err")"
}

# finish_checks [SKIPPED]: exit 1 if a check failed; else exit 77 (skipped) with SKIPPED, the
# part that could not be checked and why, when given; else exit 0.
finish_checks() {
    if ((failures)); then
        echo "$test_name: $failures check(s) failed" >&2
        exit 1
    fi
    if [[ -n "${1:-}" ]]; then
        echo "$test_name: all other checks passed; skipped: $1"
        exit 77
    fi
    echo "$test_name: all checks passed"
    exit 0
}

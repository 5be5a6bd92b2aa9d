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

fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
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

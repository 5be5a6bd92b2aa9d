# Helpers for the override shell tests (sourced; not a test itself).
# Needs FITALLOC_LIB (and others as each test says) from the test environment.
set -u
set -o pipefail

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

need_env() {
    local v
    for v in "$@"; do
        [ -n "${!v:-}" ] || fail "environment variable $v is not set"
    done
}

# Scale: smoke=1, real=10 (like the C tests).
test_scale() {
    if [ "${FITALLOC_TEST_SIZE:-smoke}" = real ]; then echo 10; else echo 1; fi
}

# A private scratch directory, removed on exit.
make_workdir() {
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/fitalloc-test.XXXXXX") || fail "mktemp"
    trap 'rm -rf "$WORK"' EXIT
}

# compile_as "CFLAGS" OUT SOURCE [flags...]: C or C++ by the source's extension, with CFLAGS and
# -g; the compiler's messages shown on failure.
compile_as() {
    local cflags=$1 out=$2 src=$3
    shift 3
    local cc=$CC std=-std=gnu11
    [[ $src == *.cpp ]] && { cc=$CXX; std=-std=gnu++17; }
    # shellcheck disable=SC2086 # the flags are meant to be split
    "$cc" $std $cflags -g -o "$out" "$src" "$@" -lpthread 2>"$WORK/cc.err" ||
        { cat "$WORK/cc.err" >&2; fail "compiling $src"; }
}

# Largest N on lines "  allocs: N" in file $1 (prints nothing if there is none).
stats_allocs() {
    grep -E '^ *allocs: *[0-9]+' "$1" | sed -E 's/^ *allocs: *([0-9]+).*/\1/' | sort -n | tail -n 1
}

# assert_allocs_gt FILE MIN WHAT: the stats in FILE show more than MIN allocations.
assert_allocs_gt() {
    local n
    n=$(stats_allocs "$1")
    if [ -z "$n" ]; then
        echo "---- $1 (last 40 lines) ----" >&2
        tail -n 40 "$1" >&2
        fail "$3: no 'allocs: N' line in the FITALLOC_STATS=1 output"
    fi
    [ "$n" -gt "$2" ] || fail "$3: stats show $n allocations, expected more than $2"
    echo "$3: $n allocations"
}

# Run a command, fail with its stderr if it exits non-zero.
run_ok() {
    local what=$1 rc=0
    shift
    local err="$WORK/run.err"
    "$@" 2>"$err" || rc=$?
    if [ "$rc" -ne 0 ]; then
        echo "---- stderr of $what ----" >&2
        tail -n 40 "$err" >&2
        fail "$what exited with $rc"
    fi
}

# word_lines N SEED: N lines "number word fraction" of random lowercase words (4 to 27
# letters), the same for the same seed; input for sort(1).
word_lines() {
    awk -v n="$1" -v seed="$2" 'BEGIN {
        srand(seed);
        for (i = 0; i < n; i++) {
            w = "";
            len = 4 + int(rand() * 24);
            for (j = 0; j < len; j++) w = w sprintf("%c", 97 + int(rand() * 26));
            printf "%d %s %.6f\n", int(rand() * 1000000000), w, rand();
        }
    }'
}

need_env FITALLOC_LIB
[ -f "$FITALLOC_LIB" ] || fail "FITALLOC_LIB=$FITALLOC_LIB does not exist"


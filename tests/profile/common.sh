# Helpers for the heap profiler's tests (sourced; not a test itself): the library through
# LD_PRELOAD, programs compiled without frame pointers (as most of Debian's are), and
# google-pprof (package google-perftools) reading the files back.
source "$(dirname "${BASH_SOURCE[0]}")/../override/common.sh"
PROFILE_TESTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
make_workdir

nm -D --defined-only "$FITALLOC_LIB" | grep -Eq ' T malloc$' ||
    { echo "no interposition layer in $FITALLOC_LIB: skipped"; exit 77; }
command -v google-pprof >/dev/null ||
    { echo "google-pprof not found (apt-get install google-perftools): skipped"; exit 77; }

# compile OUT SOURCE [flags...]: C or C++ by the source's extension, -O2 without frame pointers.
compile() { compile_as "-O2 -fomit-frame-pointer" "$@"; }

# profiled PREFIX CMD...: run CMD under fitalloc with FITALLOC_PROFILE=PREFIX (other FITALLOC_*
# variables pass through); stdout to $WORK/out, stderr to $WORK/err; returns CMD's status.
profiled() {
    local prefix=$1
    shift
    env FITALLOC_PROFILE="$prefix" LD_PRELOAD="$FITALLOC_LIB" "$@" >"$WORK/out" 2>"$WORK/err"
}

# site_mib PROGRAM FILE FUNCTION: the MiB google-pprof gives FUNCTION in FILE (in use, with
# what it calls: the helper that allocates may be inlined into it or not; the first line of a
# function pprof lists twice, inlined and not).
site_mib() {
    google-pprof --text --inuse_space "$1" "$2" 2>/dev/null |
        awk -v f="$3" '$6 == f && !found { print $4; found = 1 } END { if (!found) print 0 }'
}

# within VALUE EXPECTED PERCENT: VALUE is within PERCENT % of EXPECTED.
within() {
    awk -v v="$1" -v e="$2" -v p="$3" 'BEGIN { exit !(v >= e * (1 - p / 100) && v <= e * (1 + p / 100)) }'
}

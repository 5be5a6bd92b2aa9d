# Helpers for the FITALLOC_TRACE tests (sourced; not a test itself). On top of
# tests/override/common.sh: the library through LD_PRELOAD, and the test's own trace reader
# (trace_reader.py, written from the documented format, not from the library's code).
source "$(dirname "${BASH_SOURCE[0]}")/../override/common.sh"
TRACE_TESTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
make_workdir

symbols=$(nm -D --defined-only "$FITALLOC_LIB") || fail "nm -D $FITALLOC_LIB"
grep -Eq ' T malloc$' <<<"$symbols" || { echo "no interposition layer in $FITALLOC_LIB: skipped"; exit 77; }
command -v python3 >/dev/null || { echo "python3 not found: skipped"; exit 77; }

# compile OUT SOURCE [flags...]: C or C++ by the source's extension.
compile() {
    compile_as "-O1 -fno-builtin-malloc -fno-builtin-free -fno-builtin-calloc -fno-builtin-realloc" \
        "$@" -ldl
}

# traced TRACEFILE CMD...: run CMD under fitalloc with FITALLOC_TRACE=TRACEFILE (the other
# FITALLOC_* variables of the caller's environment pass through); stdout to $WORK/out,
# stderr to $WORK/err; returns CMD's status.
traced() {
    local file=$1
    shift
    env FITALLOC_TRACE="$file" LD_PRELOAD="$FITALLOC_LIB" "$@" >"$WORK/out" 2>"$WORK/err"
}

# check_trace SCRIPT ARGS...: run a Python check with the reader importable as trace_reader
# (`tr`); a TraceError or a failed assert fails the test with its message.
check_trace() {
    local script=$1
    shift
    python3 - "$@" <<PYEOF || fail "trace check failed (see above)"
import sys
sys.path.insert(0, "$TRACE_TESTS")
import trace_reader as tr
try:
$(sed 's/^/    /' <<<"$script")
except (tr.TraceError, AssertionError) as e:
    print("trace check:", e, file=sys.stderr)
    sys.exit(1)
PYEOF
}

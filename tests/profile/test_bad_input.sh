# Bad input to the heap profiler: each gives one clear line on stderr, the program runs (and
# unprofiled where the profile cannot be had), nothing crashes.
#   - an unwritable prefix, a rate of 0, a rate that does not parse: one line, no file;
#   - a signal that is not one: one line, the profile still written;
#   - a stack deeper than the limit: kept to 64 frames and marked with the frame
#     fitalloc_profile_stack_truncated, which google-pprof names.
# ctest labels: errors
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

compile "$WORK/deep" "$PROFILE_TESTS/deep.c"

# one_line WHAT PATTERN: stderr is one line, matching PATTERN.
one_line() {
    [[ $(wc -l <"$WORK/err") == 1 ]] || { cat "$WORK/err" >&2; fail "$1: not one line on stderr"; }
    grep -q -- "$2" "$WORK/err" || { cat "$WORK/err" >&2; fail "$1: the line does not say '$2'"; }
    echo "$1: $(cat "$WORK/err")"
}

profiled /nonexistent-dir/p "$WORK/deep" || fail "unwritable prefix: the program failed"
one_line "unwritable prefix" "cannot write /nonexistent-dir/p\..*not profiling"

for rate in 0 abc; do
    FITALLOC_PROFILE_RATE=$rate profiled "$WORK/r" "$WORK/deep" || fail "rate $rate: the program failed"
    one_line "rate $rate" "FITALLOC_PROFILE_RATE must be a size above 0.*not profiling"
    ! ls "$WORK"/r.* >/dev/null 2>&1 || fail "rate $rate: a profile was written"
done

FITALLOC_PROFILE_SIGNAL=SIGNOTONE profiled "$WORK/s" "$WORK/deep" || fail "bad signal: the program failed"
one_line "bad signal" "FITALLOC_PROFILE_SIGNAL=SIGNOTONE is not a signal"
ls "$WORK"/s.*.exit.heap >/dev/null 2>&1 || fail "bad signal: no profile written"

FITALLOC_PROFILE_RATE=1 profiled "$WORK/d" "$WORK/deep" || fail "deep stack: the program failed"
[[ ! -s $WORK/err ]] || { cat "$WORK/err" >&2; fail "deep stack: something on stderr"; }
exit_file=$(ls "$WORK"/d.*.exit.heap)
frames=$(awk '$1 == "1:" && $2 == 1048576 { for (i = 1; i <= NF; i++) if ($i == "@") print NF - i }' \
    "$exit_file")
[[ $frames == 65 ]] || fail "deep stack: the leaked block's stack has '$frames' frames, not 64 and the marker"
google-pprof --text "$WORK/deep" "$exit_file" 2>/dev/null | grep -q fitalloc_profile_stack_truncated ||
    fail "deep stack: google-pprof does not name the marker frame"
echo "deep stack: 64 frames and fitalloc_profile_stack_truncated"

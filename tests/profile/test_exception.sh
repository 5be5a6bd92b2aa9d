# Stacks through a C++ exception (exception.cpp): the 1 MiB a destructor leaks while the
# exception unwinds thrower() is charged to ~Leaker, thrower and catcher; the 2 MiB the catch
# block leaks to catcher, not thrower; the program catches its exception as without the
# profiler (sampling every allocation: rate 1).
# ctest labels: integrity
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

compile "$WORK/exception" "$PROFILE_TESTS/exception.cpp"
FITALLOC_PROFILE_RATE=1 profiled "$WORK/e" "$WORK/exception" ||
    { cat "$WORK/err" >&2; fail "the program failed"; }
exit_file=$(ls "$WORK"/e.*.exit.heap)
google-pprof --text "$WORK/exception" "$exit_file" >"$WORK/text" 2>/dev/null
cat "$WORK/text"
cum() { awk -v f="$1" '$6 == f { print $4; found = 1 } END { if (!found) print 0 }' "$WORK/text"; }
[[ $(cum Leaker::~Leaker) == 1.0 ]] || fail "~Leaker holds $(cum Leaker::~Leaker) MiB, not 1.0"
[[ $(cum thrower) == 1.0 ]] || fail "thrower holds $(cum thrower) MiB, not 1.0 (the destructor's)"
[[ $(cum catcher) == 3.0 ]] || fail "catcher holds $(cum catcher) MiB, not 3.0"
[[ $(cum main) == 3.0 ]] || fail "main holds $(cum main) MiB, not 3.0"

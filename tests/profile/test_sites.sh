# The heap profiler's acceptance (issue 41), with sites.c: 64 MiB in 64 KiB blocks, 8 MiB in
# 64-byte blocks, 4 MiB in 4 KiB blocks leaked, and a churn of 1 KiB blocks never more than
# 1 MiB live (64 MiB of it at smoke size, 1 GiB at real size). google-pprof --text must show in
# the peak file the first three within 15 % / 25 % / 25 % of their bytes, and in the exit file
# the leak alone (within 25 %). On one thread, with the sites on 4 threads, in a fork child
# (its own files; the parent's show none of the sites), and in the lab.
# The rate is 16 KiB: at 512 KiB the 4 MiB site is 8 samples, whose estimate has a standard
# deviation of 35 % (docs/decisions/062-heap-profiler.md); here 6 %, so the 25 % holds.
# ctest labels: integrity threads
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

compile "$WORK/sites" "$PROFILE_TESTS/sites.c"
churn=$((64 * $(test_scale)))
[[ $(test_scale) -gt 1 ]] && churn=1024

check_files() { # WHAT PID
    local what=$1 pid=$2 peak="$WORK/$1.$2.peak.heap" exit="$WORK/$1.$2.exit.heap"
    [[ -s $peak && -s $exit ]] || fail "$what: no profile files for pid $pid: $(ls "$WORK")"
    local large small leak
    large=$(site_mib "$WORK/sites" "$peak" keep_large)
    small=$(site_mib "$WORK/sites" "$peak" keep_small)
    leak=$(site_mib "$WORK/sites" "$peak" leak_pages)
    within "$large" 64 15 || fail "$what: peak keep_large $large MiB, not 64 within 15 %"
    within "$small" 8 25 || fail "$what: peak keep_small $small MiB, not 8 within 25 %"
    within "$leak" 4 25 || fail "$what: peak leak_pages $leak MiB, not 4 within 25 %"
    local total
    total=$(google-pprof --text "$WORK/sites" "$exit" 2>/dev/null | awk '/^Total:/ { print $2 }')
    leak=$(site_mib "$WORK/sites" "$exit" leak_pages)
    within "$leak" 4 25 || fail "$what: exit leak_pages $leak MiB, not 4 within 25 %"
    # The leak alone, but for one stray sample (16 KiB, shown as 0.1 MiB when the total's
    # rounding and the leak's differ) of a block the C library keeps to the end, such as a
    # thread's TLS block in its cache of stacks.
    awk -v t="$total" -v l="$leak" 'BEGIN { exit !(t - l <= 0.1 + 1e-9) }' ||
        fail "$what: the exit profile holds $total MiB, the leak $leak"
    echo "$what: peak 64 MiB site $large, 8 MiB site $small; exit leak $leak MiB"
}

for how in plain threads lab; do
    extra=()
    [[ $how == lab ]] && extra=(FITALLOC_MODE=lab FITALLOC_LOCK=thread)
    run=$how
    [[ $how == lab ]] && run=threads
    env "${extra[@]}" FITALLOC_PROFILE_RATE=16K FITALLOC_PROFILE="$WORK/$how" \
        LD_PRELOAD="$FITALLOC_LIB" "$WORK/sites" $run $churn >"$WORK/out" 2>"$WORK/err" ||
        { cat "$WORK/err" >&2; fail "$how: the program failed"; }
    [[ ! -s $WORK/err ]] || { cat "$WORK/err" >&2; fail "$how: something on stderr"; }
    pid=$(ls "$WORK" | sed -nE "s/^$how\.([0-9]+)\.exit\.heap$/\1/p")
    [[ -n $pid ]] || fail "$how: no exit profile: $(ls "$WORK")"
    check_files "$how" "$pid"
done

FITALLOC_PROFILE_RATE=16K profiled "$WORK/fork" "$WORK/sites" fork $churn ||
    { cat "$WORK/err" >&2; fail "fork: the program failed"; }
child=$(sed -nE 's/^child ([0-9]+)$/\1/p' "$WORK/out")
[[ -n $child ]] || fail "fork: the program named no child"
check_files fork "$child"
for f in "$WORK"/fork.*.heap; do
    [[ $f == *".$child."* ]] && continue
    [[ $(site_mib "$WORK/sites" "$f" keep_large) == 0 ]] || fail "fork: the parent's $f shows the child's sites"
done
echo "fork: the child's own files; the parent's show none of its sites"

# FITALLOC_PROFILE_SIGNAL=SIGUSR2 while 4 threads allocate (signal.c): each signal writes
# PREFIX.<pid>.<n>.heap from an allocation's slow path, not from the handler; both files are
# written whole (google-pprof reads them, and names the threads' function), the program
# neither crashes nor loses its threads' work, and the exit profile holds nothing of theirs.
# ctest labels: threads
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

compile "$WORK/signal" "$PROFILE_TESTS/signal.c"
FITALLOC_PROFILE_RATE=64K FITALLOC_PROFILE_SIGNAL=SIGUSR2 profiled "$WORK/s" "$WORK/signal" ||
    { cat "$WORK/err" >&2; fail "the program failed"; }
for n in 1 2; do
    file=$(ls "$WORK"/s.*."$n".heap) || fail "no file for signal $n"
    google-pprof --text "$WORK/signal" "$file" 2>/dev/null | awk '$6 == "worker" && $4 > 0' | grep -q . ||
        fail "signal $n: google-pprof shows no bytes under worker in $file"
    tail -n 1 "$file" | grep -q '\[vsyscall\]\|\[stack\]\|\[vdso\]\|/' || fail "signal $n: the maps section is cut short"
done
# At exit the threads' blocks are all freed; what is left is the C library's for threads still
# running (fitalloc's purge thread, which a worker's free may have started).
left=$(google-pprof --text --ignore=_fa_purge_start_point "$WORK/signal" "$WORK"/s.*.exit.heap 2>/dev/null |
    awk '$6 == "worker" { print $4 }')
[[ -z $left || $left == 0.0 ]] || fail "the exit profile holds $left MiB under worker"
echo "two signal dumps read back; nothing of the threads' left at exit"

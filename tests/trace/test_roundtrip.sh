# FITALLOC_TRACE round trip in the fast engine: roundtrip.cpp makes a known sequence of every
# kind of call (malloc, calloc, realloc growing, shrinking, of NULL and to 0 bytes,
# reallocarray, calloc overflowing, aligned_alloc, posix_memalign, memalign, valloc, free of a
# block and of NULL, free_sized, free_aligned_sized, a large block grown, operator new/new[] in
# plain, nothrow and aligned forms, operator delete/delete[] plain, sized and aligned) and logs
# each call as it saw it. The trace, read back by the test's own reader (trace_reader.py):
#   - a valid header (magic, version, sizes, the program's pid, parent_pid 0, mode 0), no
#     partial block, every block's checksum right, every record decoded;
#   - between the markers, exactly the program's log: op, size, alignment, in and out pointers
#     equal to what the program saw, nothing else, on one thread;
#   - each thread's records in the file numbered from 0 with growing times (so program order,
#     by time and thread, is one), threads numbered from 0 with the main thread 0, the log's
#     calls in program order one after the other;
#   - replayed in program order, every free/delete/realloc gets a live block;
#   - a run without FITALLOC_TRACE writes nothing; FITALLOC_TRACE= (empty) is off, silently; a
#     file that cannot be created gives one warning and the program runs untraced.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
need_env CXX

compile "$WORK/roundtrip" "$TRACE_TESTS/roundtrip.cpp"

traced "$WORK/t.fat" env -u FITALLOC_MODE "$WORK/roundtrip" ||
    { cat "$WORK/err" >&2; fail "the program failed under FITALLOC_TRACE"; }
[[ ! -s $WORK/err ]] || { cat "$WORK/err" >&2; fail "unexpected messages on stderr"; }
cp "$WORK/out" "$WORK/log"
check_trace '
t = tr.read(sys.argv[1])
h = t.header
assert h["parent_pid"] == 0 and h["mode"] == 0, h
assert t.partial == 0, f"{t.partial} bytes of a partial block"
tr.check_order(t.records)
tr.check_threads(t.records)
log = tr.read_log(sys.argv[2])
assert len(log) > 30, f"the log has {len(log)} calls"
run = tr.find_run(t.records, log)
assert {r.thread for r in run} == {0}, "the main thread is thread 0"
for a, b in zip(run, run[1:]):
    assert a.seq < b.seq and a.time_ns < b.time_ns, (a, b)
tr.check_live(t.records)
print(f"round trip: {len(log)} calls exact among {len(t.records)} records")
' "$WORK/t.fat" "$WORK/log"

# The header names the process: compare with a pid the program reports itself.
cat >"$WORK/pid.c" <<'CEOF'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(void)
{
    free(malloc(10));
    printf("%d\n", (int)getpid());
    return 0;
}
CEOF
compile "$WORK/pid" "$WORK/pid.c"
traced "$WORK/p.fat" "$WORK/pid" || fail "pid program failed"
check_trace '
t = tr.read(sys.argv[1])
assert t.header["pid"] == int(sys.argv[2]), (t.header, sys.argv[2])
' "$WORK/p.fat" "$(cat "$WORK/out")"

# Off: unset or empty writes nothing and says nothing.
rm -f "$WORK/none.fat"
env -u FITALLOC_TRACE LD_PRELOAD="$FITALLOC_LIB" "$WORK/pid" >/dev/null 2>"$WORK/err" || fail "untraced run"
[[ ! -s $WORK/err ]] || { cat "$WORK/err" >&2; fail "untraced run printed something"; }
(cd "$WORK" && FITALLOC_TRACE= LD_PRELOAD="$FITALLOC_LIB" ./pid >/dev/null 2>"$WORK/err") || fail "FITALLOC_TRACE= run"
[[ ! -s $WORK/err ]] || { cat "$WORK/err" >&2; fail "FITALLOC_TRACE= printed something"; }

# A file that cannot be created: one warning naming it, and the program runs.
traced "$WORK/no/such/dir/t.fat" "$WORK/roundtrip" || { cat "$WORK/err" >&2; fail "unopenable trace file: the program failed"; }
[[ $(wc -l <"$WORK/err") -eq 1 ]] || { cat "$WORK/err" >&2; fail "expected exactly one warning line"; }
grep -q "fitalloc: warning: FITALLOC_TRACE: cannot write $WORK/no/such/dir/t.fat (No such file or directory); not tracing" "$WORK/err" ||
    { cat "$WORK/err" >&2; fail "the warning does not say what happened"; }
[[ $(wc -l <"$WORK/out") -eq $(wc -l <"$WORK/log") ]] || fail "the untraced program logged another number of calls"
echo "trace/roundtrip: ok"

# FITALLOC_TRACE when the program does not exit normally (abnormal.c), read back by the test's
# own reader:
#   - abort() after 10,000 malloc + free pairs (no exit handler runs): the file holds the
#     buffers that were full, whole: no partial record, every check byte right, seq unique, at
#     least half of the calls there, every free of a live block;
#   - a double free reported by fitalloc (which aborts): the report writes the buffers first,
#     so the trace ends with the two frees of the block the program named; fast engine and lab;
#   - SIGKILL while the program allocates without end, once it has written a few buffers:
#     every complete record is valid (a record cut short at the end is ignored);
#   - the abort trace cut in the middle of a record reads up to its last complete record; cut
#     inside the header, it is refused with a message.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

compile "$WORK/abnormal" "$TRACE_TESTS/abnormal.c"

# abort()
traced "$WORK/abort.fat" "$WORK/abnormal" abort && fail "abort: the program did not abort"
check_trace '
t = tr.read(sys.argv[1])
assert t.partial == 0, f"{t.partial} bytes of a partial record"
tr.check_order(t.records)
tr.check_live(t.records)
pairs = sum(1 for r in t.records if r.op == tr.MALLOC and 16 <= r.size < 116)
assert pairs >= 5000, f"only {pairs} of the 10000 mallocs were written"
print(f"abort: {len(t.records)} records written")
' "$WORK/abort.fat"

# A double free reported by fitalloc.
for mode in fast lab; do
    extra=()
    [[ $mode == lab ]] && extra=(FITALLOC_MODE=lab)
    env -u FITALLOC_MODE "${extra[@]}" FITALLOC_TRACE="$WORK/df-$mode.fat" LD_PRELOAD="$FITALLOC_LIB" \
        "$WORK/abnormal" double-free >/dev/null 2>"$WORK/err" && fail "$mode: the double free was not reported"
    grep -q "double free" "$WORK/err" || { cat "$WORK/err" >&2; fail "$mode: no double-free report"; }
    block=$(sed -n 's/^block \(0x[0-9a-f]*\)$/\1/p' "$WORK/err")
    [[ -n $block ]] || { cat "$WORK/err" >&2; fail "$mode: the program did not name its block"; }
    check_trace '
t = tr.read(sys.argv[1])
assert t.partial == 0
tr.check_order(t.records)
block = int(sys.argv[2], 16)
last = tr.in_seq_order(t.records)[-3:]
assert [r.key() for r in last] == [(tr.MALLOC, 40, 0, 0, block), (tr.FREE, 0, 0, block, 0),
                                   (tr.FREE, 0, 0, block, 0)], last
print(f"{sys.argv[3]}: the trace ends with the double free ({len(t.records)} records)")
' "$WORK/df-$mode.fat" "$block" "$mode"
done

# SIGKILL once a few buffers are written.
env FITALLOC_TRACE="$WORK/kill.fat" LD_PRELOAD="$FITALLOC_LIB" "$WORK/abnormal" forever &
pid=$!
for _ in $(seq 200); do
    size=$(stat -c %s "$WORK/kill.fat" 2>/dev/null || echo 0)
    ((size > 200000)) && break
    sleep 0.05
done
kill -9 $pid
wait $pid 2>/dev/null
((size > 200000)) || fail "SIGKILL: the trace did not grow past 200 KB ($size bytes)"
check_trace '
t = tr.read(sys.argv[1])
tr.check_order(t.records)
tr.check_live(t.records)
assert len(t.records) > 4000, len(t.records)
print(f"SIGKILL: {len(t.records)} complete records, {t.partial} bytes of a partial one")
' "$WORK/kill.fat"

# Cut short: inside a record, inside the header.
head -c $((64 + 100 * 48 + 20)) "$WORK/abort.fat" >"$WORK/cut.fat"
head -c 40 "$WORK/abort.fat" >"$WORK/header.fat"
check_trace '
t = tr.read(sys.argv[1])
full = tr.read(sys.argv[2])
assert len(t.records) == 100 and t.partial == 20, (len(t.records), t.partial)
assert [r.key() + (r.seq,) for r in t.records] == [r.key() + (r.seq,) for r in full.records[:100]]
try:
    tr.read(sys.argv[3])
except tr.TraceError as e:
    assert "header" in str(e), e
else:
    raise AssertionError("a 40-byte file was read")
' "$WORK/cut.fat" "$WORK/abort.fat" "$WORK/header.fat"
echo "trace/abnormal: ok"

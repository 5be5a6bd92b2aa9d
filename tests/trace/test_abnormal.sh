# FITALLOC_TRACE when the program does not exit normally (abnormal.c), read back by the test's
# own reader:
#   - abort() after 50,000 malloc + free pairs (no exit handler runs): the file holds the
#     buffers that were full, whole: no partial block, every checksum right, each thread's
#     records numbered from 0 with growing times, at
#     least half of the calls there, every free of a live block, at most 8 bytes a record;
#   - a double free reported by fitalloc (which aborts): the report writes the buffers first,
#     so the trace ends with the two frees of the block the program named; fast engine and lab;
#   - SIGKILL while the program allocates without end, once it has written a few buffers:
#     every complete record is valid (a record cut short at the end is ignored);
#   - the SIGKILL trace cut in the middle of a block reads up to the block's last complete
#     record; cut inside a block header, up to the block before; cut inside the file header,
#     it is refused with a message; a byte changed inside a block fails its checksum.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

compile "$WORK/abnormal" "$TRACE_TESTS/abnormal.c"

# abort()
traced "$WORK/abort.fat" "$WORK/abnormal" abort && fail "abort: the program did not abort"
check_trace '
t = tr.read(sys.argv[1])
assert t.partial == 0, f"{t.partial} bytes of a partial block"
tr.check_order(t.records)
tr.check_live(t.records)
pairs = sum(1 for r in t.records if r.op == tr.MALLOC and 16 <= r.size < 116)
assert pairs >= 25000, f"only {pairs} of the 50000 mallocs were written"
size = t.blocks[-1].offset + 48 + t.blocks[-1].bytes
assert size <= 64 + 8 * len(t.records), f"{size} bytes for {len(t.records)} records"
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
last = tr.in_seq_order(t.records)[-3:]  # program order
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
print(f"SIGKILL: {len(t.records)} complete records, {t.partial} bytes of a partial block")
' "$WORK/kill.fat"

# Cut short: inside the first block (its complete records are read, unchecked), inside the
# second block's header (the blocks before it are read), inside the file header (refused).
blocks=$(python3 -c '
import sys
sys.path.insert(0, sys.argv[2])
import trace_reader as tr
print(" ".join(str(b.offset) for b in tr.read(sys.argv[1]).blocks))' "$WORK/kill.fat" \
    "$TRACE_TESTS") || fail "reading kill.fat"
read -r first second _ <<<"$blocks"
[[ -n $second ]] || fail "SIGKILL: the trace has fewer than two blocks"
head -c $((first + 48 + 1000)) "$WORK/kill.fat" >"$WORK/cut.fat"
head -c $((second + 20)) "$WORK/kill.fat" >"$WORK/cut-header.fat"
head -c 40 "$WORK/kill.fat" >"$WORK/header.fat"
check_trace '
full = tr.read(sys.argv[1])
t = tr.read(sys.argv[2])
n = len(t.records)
assert 100 < n < full.blocks[0].records, (n, full.blocks[0].records)
assert [r.key() + (r.seq, r.time_ns) for r in t.records] == \
    [r.key() + (r.seq, r.time_ns) for r in full.records[:n]]
# Up to the last complete record: what follows it is shorter than the longest record.
assert t.partial < 52 and not t.blocks[-1].complete, (t.partial, len(t.blocks))
h = tr.read(sys.argv[3])
assert len(h.records) == full.blocks[0].records and h.partial == 20, (len(h.records), h.partial)
try:
    tr.read(sys.argv[4])
except tr.TraceError as e:
    assert "header" in str(e), e
else:
    raise AssertionError("a 40-byte file was read")
' "$WORK/kill.fat" "$WORK/cut.fat" "$WORK/cut-header.fat" "$WORK/header.fat"

# A byte changed inside a block (all its bits flipped: writing a fixed value changed nothing when
# the byte held it already): its checksum says so, with the block's offset.
cp "$WORK/kill.fat" "$WORK/bad.fat"
python3 -c '
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2]))
    byte = f.read(1)[0]
    f.seek(int(sys.argv[2]))
    f.write(bytes([byte ^ 0xFF]))' "$WORK/bad.fat" $((second + 48 + 10))
check_trace '
try:
    tr.read(sys.argv[1])
except tr.TraceError as e:
    assert f"byte {sys.argv[2]}: block 1: bad checksum" in str(e), e
else:
    raise AssertionError("a damaged block was read")
' "$WORK/bad.fat" "$second"
echo "trace/abnormal: ok"

# fitalloc stats: a real FITALLOC_STATS=json dump (the fast engine's and the lab's), found
# among other stderr lines, printed as tables whose numbers are the dump's; from a file or
# standard input; several dumps in one file; a missing file, a directory, a file without a
# dump or with a cut one: a message and status 1.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
need_interposition

seq 30000 >"$WORK/numbers"
{
    echo "a line the program printed"
    FITALLOC_STATS=json "$CMD" run -- sort -rn "$WORK/numbers" 2>&1 >/dev/null
    echo "another line"
} >"$WORK/fast.err" || fail "the fast engine's dump"
FITALLOC_STATS=json "$CMD" run --policy worst --lock arenas -- sort -rn "$WORK/numbers" \
    2>"$WORK/lab.err" >/dev/null || fail "the lab's dump"

# json_field FILE KEY FIELD: a field of the dump in FILE, as Python prints it.
json_field() {
    "$PYTHON" - "$@" <<'PYEOF'
import json, sys
path, key, field = sys.argv[1:]
text = open(path).read()
start = text.index('{"%s"' % key)
obj, _ = json.JSONDecoder().raw_decode(text, start)
print(obj[key][field])
PYEOF
}

thousands() { "$PYTHON" -c 'import sys; print(f"{int(sys.argv[1]):,}")' "$1"; }

run_cmd stats "$WORK/fast.err"
expect_rc 0 "stats of the fast engine"
pid=$(json_field "$WORK/fast.err" fitalloc pid)
allocs=$(json_field "$WORK/fast.err" fitalloc allocs)
[ "$allocs" -gt 10 ] || fail "the dump shows $allocs allocations"
expect_in "$WORK/out" "fitalloc statistics (fast engine, pid $pid)" "stats title"
grep -Eq "^  allocations +$(thousands "$allocs")$" "$WORK/out" ||
    fail "stats: no 'allocations $allocs' row: $(cat "$WORK/out")"
expect_in "$WORK/out" "size classes (" "stats: the size classes"
expect_in "$WORK/out" "    block  " "stats: the size classes' header"

# Standard input gives the same.
"$CMD" stats - <"$WORK/fast.err" >"$WORK/stdin.out" || fail "stats -"
cmp -s "$WORK/out" "$WORK/stdin.out" || fail "stats - differs from stats FILE"

run_cmd stats "$WORK/lab.err"
expect_rc 0 "stats of the lab"
pid=$(json_field "$WORK/lab.err" fitalloc_lab pid)
mallocs=$(json_field "$WORK/lab.err" fitalloc_lab mallocs)
expect_in "$WORK/out" "fitalloc lab statistics (pid $pid, policy worst, index tree, lock arenas, coalescing on, arena none" "lab title"
grep -Eq "^  mallocs +$(thousands "$mallocs")$" "$WORK/out" ||
    fail "stats: no 'mallocs $mallocs' row: $(cat "$WORK/out")"
expect_in "$WORK/out" "fragmentation (free / heap)" "lab fragmentation"
expect_in "$WORK/out" "internal fragmentation (granted / requested)" "lab internal fragmentation"
# The two heap sizes say what they count, so that the smaller max heap does not look wrong.
for field in "max_heap:max heap (payloads, headers excluded)" "heap_bytes:heap bytes (headers included)"; do
    bytes=$(json_field "$WORK/lab.err" fitalloc_lab "${field%%:*}")
    grep -Fq "  ${field#*:}  " "$WORK/out" && grep -Eq "\($(thousands "$bytes") bytes\)$" "$WORK/out" ||
        fail "stats: no '${field#*:}' row of $bytes bytes: $(cat "$WORK/out")"
done
grep -Eq "^ +block +mallocs +requested +granted$" "$WORK/out" ||
    fail "stats: no lab size classes' header: $(cat "$WORK/out")"

# Two dumps in one file: both, in order.
cat "$WORK/lab.err" "$WORK/fast.err" >"$WORK/both.err"
run_cmd stats "$WORK/both.err"
expect_rc 0 "two dumps"
[ "$(grep -c '^fitalloc .*statistics (' "$WORK/out")" = 2 ] || fail "two dumps: $(cat "$WORK/out")"
head -n 1 "$WORK/out" | grep -q "^fitalloc lab statistics" || fail "two dumps: not in order"

# Bad input.
run_cmd stats "$WORK/nonexistent"
expect_rc 1 "a missing file"
expect_in "$WORK/err" "fitalloc stats: $WORK/nonexistent: no such file" "a missing file"
run_cmd stats "$WORK"
expect_rc 1 "a directory"
expect_in "$WORK/err" "is a directory" "a directory"
printf 'fitalloc: statistics (pid 12)\n  allocs: 3\n' >"$WORK/text.err"
run_cmd stats "$WORK/text.err"
expect_rc 1 "a file without JSON"
expect_in "$WORK/err" "no fitalloc statistics found" "a file without JSON"
head -c 60 "$WORK/fast.err" >"$WORK/cut.err"
grep -o '{"fitalloc": {"pid": [0-9]*, "allocs"' "$WORK/fast.err" >>"$WORK/cut.err"
run_cmd stats "$WORK/cut.err"
expect_rc 1 "a cut dump"
expect_in "$WORK/err" "no fitalloc statistics found" "a cut dump"
run_cmd stats
expect_rc 2 "no file"
echo "command/stats: ok"

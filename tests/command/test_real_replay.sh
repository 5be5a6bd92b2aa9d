# End to end on a real program: `fitalloc run --trace` records Python (with PYTHONMALLOC=malloc,
# so that its objects are malloc's) building a dictionary of 2,000 entries,
# and `fitalloc replay` (the real fitalloc-replay) replays that trace under every policy and
# the engine: one row each, operations = the trace's records, sane heap and fragmentation
# figures, and the same figures (all but the timings) when replayed again.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
need_interposition
unset FITALLOC_REPLAY
cd "$WORK" || fail "cd $WORK"

run_cmd run --trace t.fat -- env PYTHONMALLOC=malloc "$PYTHON" -S -c \
    'd = {str(i): [i, str(i) * 3] for i in range(2000)}; print(len(d))'
expect_rc 0 "run --trace -- python3"
[ "$(cat "$WORK/out")" = 2000 ] || fail "python3 under fitalloc printed $(head -c 200 "$WORK/out")"
[ -s t.fat ] || fail "no trace written"

records=$("$FITALLOC_BUILD_DIR/fitalloc-replay" t.fat --dump | wc -l)
[ "$records" -gt 1000 ] || fail "the trace of python3 has only $records records"

for i in 1 2; do
    run_cmd replay t.fat --engine --json
    expect_rc 0 "replay --engine --json ($i)"
    cp "$WORK/out" "replay$i.json"
done
"$PYTHON" - replay1.json replay2.json "$records" <<'PYEOF' || fail "replay of the python3 trace"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
records = int(sys.argv[3])
configs = [r["config"] for r in a["rows"]]
assert configs == ["first", "next", "best", "worst", "segregated", "tlsf", "buddy", "slab", "engine"], configs
assert a["records"] == records, (a["records"], records)
for r in a["rows"]:
    assert r["ops"] == records, r
    assert 0 < r["peak_heap"] and 0 <= r["end_heap"] <= r["peak_heap"] * 2, r
    assert r["unmatched"] == 0 and r["failed"] == 0, r
    if r["config"] != "engine":
        assert r["peak_live"] <= r["peak_heap"], r
        for k in ("frag_free_mean", "frag_free_end", "frag_largest_mean", "frag_largest_end"):
            assert 0 <= r[k] <= 1, (k, r)
        # The slab never splits a block (a run of pages only, for a shorter large one).
        assert r["splits"] > 0 or r["config"] == "slab", r
timing = {"mean_ns", "p99_ns"}
for x, y in zip(a["rows"], b["rows"]):
    if x["config"] == "engine":
        continue  # its heap is the engine's committed memory, which the OS may round
    assert {k: v for k, v in x.items() if k not in timing} == \
        {k: v for k, v in y.items() if k not in timing}, (x, y)
print(f"{records} records; peak heap by policy:",
      {r["config"]: r["peak_heap"] for r in a["rows"]})
PYEOF
echo "ok: python3 traced ($records records) and replayed under every policy"

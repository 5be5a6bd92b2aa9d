#!/usr/bin/env bash
# The fragmentation study (bench/harness/frag_study.py). First its arithmetic, on a replay
# study's document made by hand: each measure is (numerator / denominator - 1) x 100 of the
# documented fields (docs/replay.md), the mean column is the mean over the programs, a policy
# missing from a program is '-', the reading ranks the policies by their mean. Then the real
# thing, `tools/bench.sh --study fragmentation` at a tiny scale on perl and gawk (and redis-server
# under its load when installed): no timed runs, report.md holds the table with a row for every
# policy and the engine and a column per program, whose cells agree with the rows of
# study.json, and fragmentation.json has every measure.
test_name=test_frag_study
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
build=${FITALLOC_BUILD_DIR:?FITALLOC_BUILD_DIR is not set}
replay=$build/fitalloc-replay
[[ -x "$replay" ]] || { echo "FAIL: $replay is not built" >&2; exit 1; }

echo "== the measures on a hand-made document"
rc=0
PYTHONPATH=$src/bench python3 - <<'PY' || rc=$?
from harness import frag_study as fs

def row(config, heap_at_peak, peak_live, blocks_heap, blocks, peak_heap, gr=1.0):
    return {"config": config, "heap_at_peak_live": heap_at_peak, "peak_live": peak_live,
            "heap_at_peak_live_blocks": blocks_heap, "peak_live_blocks": blocks,
            "peak_heap": peak_heap, "granted_over_requested": gr}

# The hand-worked trace of tests/replay/test_frag_measures.c: best fit and the buddy system.
doc = {"scale": 1, "programs": [
    {"name": "a", "status": "ok", "rows": [row("best", 3296, 2200, 3296, 2272, 3296, 1.01),
                                           row("buddy", 4096, 2200, 4096, 2272, 4096, 1.02)]},
    {"name": "b", "status": "ok", "rows": [row("best", 1100, 1000, 1100, 1000, 1200)]},
    {"name": "c", "status": "missing", "rows": []}]}
m = fs.measures(doc)
assert list(m) == ["a", "b"], list(m)
near = lambda x, y: abs(x - y) < 1e-9
a = m["a"]
assert near(a["best"]["at_peak_live"], 100 * (3296 / 2200 - 1)), a["best"]
assert near(a["best"]["at_peak_live_net"], 100 * (3296 / 2272 - 1)), a["best"]
assert near(a["buddy"]["peak_heap"], 100 * (4096 / 2200 - 1)), a["buddy"]
assert near(a["buddy"]["peak_heap_net"], 100 * (4096 / 2272 - 1)), a["buddy"]
assert near(m["b"]["best"]["peak_heap"], 20.0) and near(m["b"]["best"]["at_peak_live"], 10.0)
lines = fs.table(m, "peak_heap", "peak_heap_net")
assert lines[0] == "| policy | a | b | mean |", lines[0]
best = next(l for l in lines if l.startswith("| best |"))
# a: 49.8 / 45.1; b: 20.0 / 20.0; mean (49.8 + 20) / 2 = 34.9, (45.1 + 20) / 2 = 32.5
assert best == "| best | 49.8 / 45.1 | 20.0 / 20.0 | **34.9 / 32.5** |", best
buddy = next(l for l in lines if l.startswith("| buddy |"))
assert buddy == "| buddy | 86.2 / 80.3 | - / - | **86.2 / 80.3** |", buddy
assert not any(l.startswith("| first |") for l in lines), "a policy no program has"
reading = " ".join(fs.reading(m))
assert "best 32.5 %, buddy 80.3 %" in reading, reading
print("measures: ok")
PY
((rc == 0)) || fail "the measures on the hand-made document (above)"

programs=perl,gawk
command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null &&
    programs=$programs,redis
echo "== bash tools/bench.sh --study fragmentation on $programs"
rc=0
bash "$src/tools/bench.sh" --lib "$lib" --bin-dir "$work/bin" --no-install --replay "$replay" \
    --study fragmentation --study-programs "$programs" --study-scale 0.1 --no-plots \
    --out "$work/res" \
    >"$work/study.out" 2>"$work/study.err" || rc=$?
((rc == 0)) || fail "the study exited $rc: $(tail -n 5 "$work/study.err")"

rc=0
python3 - "$work/res" "$programs" <<'PY' || rc=$?
import json, os, sys
res, programs = sys.argv[1], sys.argv[2].split(",")
from checks import bad, check, finish

configs = ["first", "next", "best", "worst", "segregated", "tlsf", "buddy", "slab", "engine"]
check(not os.path.exists(os.path.join(res, "runs.csv")), "timed runs ran")
doc = json.load(open(os.path.join(res, "replay", "study.json")))
check([e["name"] for e in doc["programs"]] == programs, f"programs {doc['programs']}")
check(doc["scale"] == 0.1, f"scale {doc['scale']}")
for e in doc["programs"]:
    check(e["status"] == "ok", f"{e['name']}: {e['status']} {e['note']}")
frag = json.load(open(os.path.join(res, "fragmentation", "fragmentation.json")))["measures"]
check(sorted(frag) == sorted(programs), f"fragmentation.json programs {sorted(frag)}")
report = open(os.path.join(res, "report.md")).read()
check("## Fragmentation of real programs" in report, "report.md has no fragmentation section")
check("| policy | " + " | ".join(programs) + " | mean |" in report, "no table header")
for e in doc["programs"]:
    rows = {r["config"]: r for r in e["rows"]}
    check(sorted(rows) == sorted(configs), f"{e['name']}: rows {sorted(rows)}")
    for c, r in rows.items():
        check(r["peak_heap"] >= r["heap_at_peak_live"] > 0, f"{e['name']} {c}: heaps {r}")
        check(r["peak_live_blocks"] >= r["peak_live"] > 0, f"{e['name']} {c}: live {r}")
        check(r["granted_over_requested"] >= 1.0, f"{e['name']} {c}: granted < requested")
        want = 100 * (r["peak_heap"] / r["peak_live"] - 1)
        got = frag.get(e["name"], {}).get(c, {}).get("peak_heap")
        check(got is not None and abs(got - want) < 1e-6, f"{e['name']} {c}: {got} != {want}")
for c in configs:
    line = next((l for l in report.splitlines() if l.startswith(f"| {c} | ")), None)
    check(line is not None and line.count("|") == len(programs) + 3,
          f"report.md: no row or a bad row for {c}: {line}")
print(f"study: {len(bad)} problem(s)")
finish()
PY
((rc == 0)) || fail "the study's results (above)"
finish_checks

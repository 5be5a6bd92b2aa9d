#!/usr/bin/env bash
# The bench's replay study (bench/harness/replay_study.py) with the real tools: through
# tools/bench.sh on a tiny suite, the system python3 traced at a small scale, replayed and
# drawn: study.json and replay.json have a row for every policy and the engine, report.md has
# the section, its table, a reading that names the policy with the smallest peak heap (checked
# against the rows) and the side-by-side map, which exists and is a PNG. Then programs that are
# not installed (a PATH without sqlite3 and gcc): a note each, the bench still exits 0; and a
# bad program name is a usage error.
test_name=test_study
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
build=${FITALLOC_BUILD_DIR:?FITALLOC_BUILD_DIR is not set}
replay=$build/fitalloc-replay
# The build always makes fitalloc-replay: its absence is a broken build, not a reason to skip.
[[ -x "$replay" ]] || { echo "FAIL: $replay is not built" >&2; exit 1; }
[[ -x /usr/bin/python3 ]] || { echo "skip: no /usr/bin/python3 to trace"; exit 77; }

# --replay: the fitalloc-replay of this build, so that the test never builds anything.
bench=(bash "$src/tools/bench.sh" --lib "$lib" --bin-dir "$work/bin" --no-install
    --replay "$replay" -w selftest -a fitalloc,glibc -r 1)

# ---- python3 at a small scale (about 0.2 M operations)
echo "== the study on python3"
rc=0
"${bench[@]}" --study-programs python3 --study-scale 0.1 --out "$work/res" \
    >"$work/study.out" 2>"$work/study.err" || rc=$?
((rc == 0)) || fail "bench with the study exited $rc: $(tail -n 5 "$work/study.err")"

run_checks "the study's results are not what was run (above)" "$work/res" <<'PY'
import json, os, sys
res = sys.argv[1]
from checks import bad, check, finish

configs = ["first", "next", "best", "worst", "segregated", "tlsf", "buddy", "slab", "engine"]
doc = json.load(open(os.path.join(res, "replay", "study.json")))
check([e["name"] for e in doc["programs"]] == ["python3"], f"programs {doc['programs']}")
e = doc["programs"][0]
check(e["status"] == "ok", f"python3: {e['status']} {e['note']}")
check(e["command"].startswith("/usr/bin/python3 "), f"command {e['command']!r}")
rows = json.load(open(os.path.join(res, "replay", "python3", "replay.json")))["rows"]
check([r["config"] for r in rows] == configs, f"replay.json configs {[r['config'] for r in rows]}")
check([r["config"] for r in e["rows"]] == configs, "study.json rows")
# Python's start alone makes tens of thousands of calls; the script many more.
check(all(r["ops"] == e["records"] and r["ops"] > 50000 for r in rows), f"ops {e['records']}")
check(all(r["peak_heap"] >= r["peak_live"] > 0 for r in rows), "a peak heap below the live bytes")
check(rows[-1]["splits"] is None and all(r["splits"] > 0 for r in rows[:-1]),
      "splits: the lab's counter, null for the engine")

# The reading names the lab configuration with the smallest peak heap, computed here again.
lab = rows[:-1]
low = min(r["peak_heap"] for r in lab)
winners = [r["config"] for r in lab if r["peak_heap"] == low]
report = open(os.path.join(res, "report.md")).read()
for text in ("## Real programs, replayed", "### python3", "**Reading.**",
             f"- **python3**: {' and '.join(winners)} kept the smallest peak heap",
             f"| **{winners[0]}** | {e['records']:,} |",
             "| config | ops | peak heap | end heap | frag free | frag largest | free blocks | "
             "splits | coalesces | mean ns | p99 ns |",
             "- `replay/`: the replay study"):
    check(text in report, f"report.md lacks {text!r}")
check(report.index("## Real programs, replayed") < report.index("## Files"), "section order")
check("| engine |" in report, "no engine row in the table")

# The maps: drawn when matplotlib is there; else a note says why.
maps = os.path.join(res, "replay", "python3", "maps")
if e["maps"]:
    check("(replay/python3/maps/compare.png)" in report, "report.md does not show compare.png")
    for name in ["compare"] + configs[:-1]:
        path = os.path.join(maps, name + ".png")
        ok = os.path.isfile(path) and open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
        check(ok, f"{path} is missing or not a PNG")
    print("maps: drawn")
else:
    check("matplotlib" in e["note"] and "No maps: " in report, f"no maps and no reason: {e}")
    print("maps: not drawn (no matplotlib)")
finish()
PY
maps_checked=0
grep -q "^maps: drawn" "$work/check.out" && maps_checked=1

# ---- programs that are not installed: a PATH without sqlite3 and gcc (the workloads are
# built already and the bench finds everything else by absolute path)
echo "== missing programs"
compare_without_programs "missing programs" --replay "$replay" -w selftest -a fitalloc,glibc -r 1 \
    --study-programs sqlite3,gcc
for p in sqlite3 gcc; do
    grep -q "^- replay study: $p not studied: $p not found (Debian: apt-get install $p)" \
        "$work/missing/report.md" || fail "report.md has no note for the missing $p"
    grep -q "^Not studied: $p not found (Debian: apt-get install $p)\.$" \
        "$work/missing/report.md" ||
        fail "the study's section does not say $p was not studied"
done
grep -q '"status": "missing"' "$work/missing/replay/study.json" ||
    fail "study.json does not mark the programs missing"

# ---- a bad program name is a usage error that lists the valid ones
rc=0
"${bench[@]}" --study-programs no-such-program --out "$work/unused" >/dev/null \
    2>"$work/bad.err" || rc=$?
if ((rc != 2)) || ! grep -q "valid: python3, sqlite3, gcc" "$work/bad.err"; then
    fail "--study-programs no-such-program: exit $rc (expected 2): $(tail -n 2 "$work/bad.err")"
fi

((maps_checked)) || finish_checks "no matplotlib to draw the maps"
finish_checks

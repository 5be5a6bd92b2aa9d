#!/usr/bin/env bash
# The timed real-program study (bench/harness/programs_timed.py). First its checks, on programs
# made for them: a run whose output differs from glibc's is a failure naming the program and
# the allocator, and a program that is not installed is named with its Debian package, not run.
# Then the real thing, `tools/bench.sh --study programs` at a tiny scale on three programs and
# start-up under fitalloc and glibc: exit 0, no timed bench runs, report.md holds a row per
# program, the geometric means and the summary (start-up out of the means, against no preload),
# programs.json a clean run per program, allocator and round.
test_name=test_programs_study
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

echo "== a differing output and a missing program"
rc=0
PYTHONPATH=$src/bench python3 - "$lib" "$work/checks" <<'PY' || rc=$?
import sys
from harness import allocators as al
from harness import programs_timed as pt
from harness import study_programs as sp

lib, out = sys.argv[1], sys.argv[2]
echo_preload = pt.Timed("echo-preload", "sh", "dash", "prints its preload",
                        lambda work, scale: sp.Invocation(["sh", "-c", 'echo "$LD_PRELOAD"']))
absent = pt.Timed("absent", "fitalloc-no-such-program", "no-such-package", "not installed",
                  lambda work, scale: sp.Invocation(["fitalloc-no-such-program"]))
allocs = [al.Allocator("glibc", ""), al.Allocator("fitalloc", lib)]
doc = pt.run(out, allocs, [echo_preload, absent], 1.0, 2, lambda msg: None)
fails = doc["failures"]
assert len(fails) == 2, fails
assert all(f.startswith("echo-preload under fitalloc") and "output differs from glibc's" in f
           for f in fails), fails
assert [p["name"] for p in doc["programs"]] == ["echo-preload"], doc["programs"]
assert doc["missing"] and "fitalloc-no-such-program" in doc["missing"][0] \
    and "no-such-package" in doc["missing"][0], doc["missing"]
lines = pt.table(doc)
assert any(l.startswith("- FAILED: echo-preload under fitalloc") for l in lines), lines
assert any("absent: not run" in l for l in lines), lines
print("checks: ok")
PY
((rc == 0)) || fail "the study's checks (above)"

programs=sort,awk,bc,startup  # in the study's order
echo "== bash tools/bench.sh --study programs on $programs"
rc=0
bash "$src/tools/bench.sh" --lib "$lib" --bin-dir "$work/bin" --no-install --study programs \
    --study-programs "$programs" --study-scale 0.01 -r 2 -a fitalloc,glibc --out "$work/res" \
    >"$work/study.out" 2>"$work/study.err" || rc=$?
((rc == 0)) || fail "the study exited $rc: $(tail -n 5 "$work/study.err")"

rc=0
python3 - "$work/res" "$programs" <<'PY' || rc=$?
import json, os, sys
res, programs = sys.argv[1], sys.argv[2].split(",")
assert not os.path.exists(os.path.join(res, "runs.csv")), "timed bench runs ran"
doc = json.load(open(os.path.join(res, "programs", "programs.json")))
assert [p["name"] for p in doc["programs"]] == programs, doc["programs"]
assert doc["failures"] == [], doc["failures"]
assert len(doc["runs"]) == len(programs) * 2 * 2, len(doc["runs"])
for run in doc["runs"]:
    assert run["error"] == "" and run["peak_kib"] > 0, run
report = open(os.path.join(res, "report.md")).read()
for name in programs:
    assert f"| {name} | " in report, name
assert "| **geometric mean** (start-up apart) |" in report
# The summary: means over the programs without start-up, which is given against no preload.
assert f"Geometric means over {len(programs) - 1} programs" in report, report
assert "- fitalloc's time: " in report and "- startup (against no preload): " in report, report
print("study: ok")
PY
((rc == 0)) || fail "the study's files (above)"
finish_checks

#!/usr/bin/env bash
# The bench harness end to end, on a tiny suite through tools/bench.sh: it writes the raw
# results, report.md and PNG plots; it interleaves the allocators (the run order in runs.csv);
# a workload that reports corruption, and one that crashes, are marked FAILED while the rest
# goes on; one that times out is not run again; short cases are marked; the report has the
# section "Where a peer is ahead" and the machine's load; unknown workload or
# allocator names are errors that list the valid names; --baseline runs a second build beside
# the first. Then the summary's second mean, on a made-up set of results: a known pathology of
# one peer is left out of it, and nothing else.
test_name=test_harness
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

allocs=fitalloc,glibc
[[ -e /usr/lib/x86_64-linux-gnu/libmimalloc.so.2 ]] && allocs+=,mimalloc
bench=(bash "$src/tools/bench.sh" --lib "$lib" --bin-dir "$work/bin" --no-install)

# ---- names: an unknown workload or allocator is an error listing the valid ones
for bad in "-w no-such-workload" "-a no-such-allocator"; do
    rc=0
    # shellcheck disable=SC2086 # $bad is two words on purpose
    "${bench[@]}" $bad -r 1 --out "$work/unused" >/dev/null 2>"$work/names.err" || rc=$?
    if ((rc != 2)) || ! grep -q "valid: .*glibc\|valid: .*churn" "$work/names.err"; then
        fail "'$bad': exit $rc (expected 2 and a list of valid names): $(cat "$work/names.err")"
    else
        echo "ok: '$bad' -> $(tail -n 1 "$work/names.err" | cut -c1-100)..."
    fi
done

# ---- a tiny suite: two passing workloads, one corrupt, one crashing, and a thread sweep
echo "== tiny suite under $allocs"
rc=0
"${bench[@]}" -w selftest,selftest-corrupt,selftest-crash,cse3320,cs33-scaling --threads 1,2 \
    -a "$allocs" -r 3 --out "$work/res" >"$work/bench.out" 2>"$work/bench.err" || rc=$?
cat "$work/bench.out"
((rc == 1)) || fail "bench exited $rc, expected 1 (some runs FAILED): $(tail -n 5 "$work/bench.err")"
grep -q "left ~" "$work/bench.err" || fail "no progress line with the time left on stderr"
grep -q "^where a peer is ahead of fitalloc beyond noise" "$work/bench.out" ||
    fail "the bench's output does not end with where a peer is ahead"

res=$work/res
for f in runs.csv figures.csv runs.json summary.json report.md; do
    [[ -s "$res/$f" ]] || fail "$f missing or empty"
done

python3 - "$res" "$allocs" <<'PY' || fail "results do not show what was run (see above)"
import csv, json, os, sys
res, allocs = sys.argv[1], sys.argv[2].split(",")
rows = list(csv.DictReader(open(os.path.join(res, "runs.csv"))))
from checks import bad, check, finish

cases = ["selftest", "selftest-corrupt", "selftest-crash", "cse3320", "cs33-scaling:1",
         "cs33-scaling:2"]
check(len(rows) == 3 * len(cases) * len(allocs), f"{len(rows)} runs, expected {3 * len(cases) * len(allocs)}")
check([int(r["seq"]) for r in rows] == list(range(1, len(rows) + 1)), "seq is not the run order")

# Interleaving: per repetition and case, every allocator once, back to back (A B C), in an
# order rotated by one place from one repetition to the next.
orders = {}
for start in range(0, len(rows), len(allocs)):
    group = rows[start:start + len(allocs)]
    key = (group[0]["rep"], group[0]["case"])
    check(all((r["rep"], r["case"]) == key for r in group), f"runs of {key} are not back to back")
    check([int(r["position"]) for r in group] == list(range(len(allocs))), f"positions of {key}")
    check(sorted(r["allocator"] for r in group) == sorted(allocs), f"allocators of {key}")
    orders[key] = [r["allocator"] for r in group]
for case in cases:
    first = orders.get(("1", case))
    for rep in (2, 3):
        k = (rep - 1) % len(allocs)
        check(orders.get((str(rep), case)) == first[k:] + first[:k],
              f"rep {rep} of {case}: order {orders.get((str(rep), case))} is not {first} rotated by {k}")
check([r["case"] for r in rows][::len(allocs)][:len(cases)] == cases, "cases not in the given order")

# Status: the corrupt and crashing workloads FAILED with the reason, the others passed.
for r in rows:
    if r["case"] == "selftest-corrupt":
        check(r["status"] == "FAILED" and "CORRUPTION" in r["note"], f"corrupt run: {r['status']} {r['note']}")
    elif r["case"] == "selftest-crash":
        check(r["status"] == "FAILED" and "SIGABRT" in r["note"], f"crash run: {r['status']} {r['note']}")
    else:
        check(r["status"] == "ok", f"{r['case']} under {r['allocator']}: {r['status']} {r['note']}")
    if r["status"] == "ok":
        check(float(r["wall_s"]) > 0 and int(r["maxrss_kib"]) > 0, f"no time or RSS in {r}")

# Figures, histogram and checksums were read from the workloads' output.
figs = [r for r in csv.DictReader(open(os.path.join(res, "figures.csv")))]
check(any(f["case"] == "selftest" and f["key"] == "bytes" and float(f["value"]) == 40400 for f in figs),
      "selftest's figure 'bytes 40400' is not in figures.csv")
runs = json.load(open(os.path.join(res, "runs.json")))
check(all(r["hist"] == [[8, 3], [16, 1]] for r in runs if r["case"] == "selftest"),
      "selftest's histogram rows are not in runs.json")
check(len({r["checksum"] for r in runs if r["case"] == "cse3320"}) == 1, "cse3320 checksums differ")

summary = json.load(open(os.path.join(res, "summary.json")))
ref = summary["reference"]
check(ref == ("mimalloc" if "mimalloc" in allocs else "glibc"), f"reference {ref}")
cell = next(c for c in summary["cells"] if c["case"] == "cse3320" and c["allocator"] == ref)
check(cell["time_ratio"] == 1.0 and cell["rss_ratio"] == 1.0, "the reference's own ratios are not 1")
check({g["allocator"] for g in summary["geometric_means"]} == set(allocs), "geometric means")
# No known pathology among these cases: the second mean is the first, and says so.
second = summary["geometric_means_without_pathologies"]
check(second["left_out"] == [] and second["means"] == summary["geometric_means"],
      f"without pathologies: {second}")
# cse3320 runs ~0.01 s: short, marked in the table and listed in summary.json.
check("cse3320" in summary["short_cases"], f"short cases {summary['short_cases']}")

report = open(os.path.join(res, "report.md")).read()
for text in ("## Summary", "## All cases", "## FAILED runs", "selftest-corrupt", "CSE3320",
             "| mallocs | 16 405 |", "no known pathology in this run", "\ncse3320* ",
             "* short: under 0.2 s", "Cases marked `*` are short",
             "## Where a peer is ahead", "- machine load: load average (1 min) "):
    check(text in report, f"report.md lacks {text!r}")
load = summary["meta"].get("load") or {}
check(all(load.get(k) is not None for k in ("load_start", "load_end", "others_cpu_s", "cores")),
      f"summary.json's meta lacks the machine's load: {load}")
finish()
PY

# ---- a run that times out is FAILED, and its other repetitions are not run at all
echo "== a workload that hangs, timeout 1 s, 3 repetitions"
rc=0
"${bench[@]}" -w selftest-hang -a fitalloc,glibc -r 3 --timeout 1 --no-plots \
    --out "$work/hang" >/dev/null 2>"$work/hang.err" || rc=$?
((rc == 1)) || fail "hanging workload: exit $rc, expected 1: $(tail -n 3 "$work/hang.err")"
python3 - "$work/hang/runs.csv" <<'PY' || fail "the timed-out workload was not handled as expected"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
from checks import bad, finish
if len(rows) != 6:
    bad.append(f"{len(rows)} rows, expected 6")
for r in rows:
    want = "timeout after 1s" if r["rep"] == "1" else "not run: timed out in repetition 1"
    if r["status"] != "FAILED" or not r["note"].startswith(want):
        bad.append(f"rep {r['rep']} {r['allocator']}: {r['status']} {r['note']!r}, expected {want!r}")
finish()
PY

# ---- the second geometric mean, on made-up results: mimalloc (the reference) 8x slower
# than the others on cs33-t1 (a known pathology), glibc 5x on larson (an outlier that is not)
echo "== the mean without known pathologies"
PYTHONPATH="$src/bench:$PYTHONPATH" python3 - "$work/fake" <<'PY' || fail "the mean without known pathologies is wrong"
import json, math, os, sys
from harness import pathologies, results, summary, table
from harness.runner import Run

allocs = ["fitalloc", "glibc", "jemalloc", "mimalloc"]
def cells_for(times):
    runs = []
    for (case, alloc), t in times.items():
        for rep in range(3):
            runs.append(Run(seq=len(runs) + 1, rep=rep, case=case, workload=case, threads=None,
                            allocator=alloc, position=0, wall_s=t, user_s=t, sys_s=0.0,
                            maxrss_kib=1024, checksum="x"))
    return summary.summarize(runs)

def table_of(case_times):
    return {(c, a): t for c, ts in case_times.items() for a, t in zip(allocs, ts)}

times = table_of({"churn": (0.5, 0.6, 0.7, 0.5), "cs33-t1": (0.1, 0.12, 0.11, 0.8),
                  "larson": (0.4, 2.0, 0.4, 0.4)})
cases = ["churn", "cs33-t1", "larson"]
from checks import bad, check, finish

cells = cells_for(times)
found = pathologies.outliers(cells, cases, allocs)
check([(o.case, o.allocator, o.known) for o in found]
      == [("cs33-t1", "mimalloc", True), ("larson", "glibc", False)], f"outliers {found}")
left_out = pathologies.excluded_cases(found)
check(left_out == ["cs33-t1"], f"left out: {left_out}")
every = {o.allocator: o for o in summary.overall(cells, cases, allocs, "mimalloc")}
without = {o.allocator: o for o in summary.overall(
    cells, [c for c in cases if c not in left_out], allocs, "mimalloc")}
# fitalloc: ratios 1, 0.125, 1 over all cases (mean 0.5); 1 and 1 without cs33-t1
check(math.isclose(every["fitalloc"].time, 0.5) and every["fitalloc"].cases == 3,
      f"all cases: {every['fitalloc']}")
check(math.isclose(without["fitalloc"].time, 1.0) and without["fitalloc"].cases == 2,
      f"without pathologies: {without['fitalloc']}")
lines = "\n".join(table.overall_table(list(every.values()), "mimalloc", list(without.values()),
                                       found))
print(lines)
check("without known pathologies: cs33-t1 left out" in lines, "the table does not name cs33-t1")
check("cs33-t1: mimalloc 7.3x" in lines, "the table does not give mimalloc's factor on cs33-t1")
check("  glibc: larson 5.0x" in lines and "larson left out" not in lines,
      "larson must be named as an outlier and kept")
os.makedirs(sys.argv[1], exist_ok=True)
path = os.path.join(sys.argv[1], "summary.json")
results.write_summary_json(path, {}, cells, cases, {c: allocs for c in cases}, "mimalloc",
                           list(every.values()), list(without.values()), found, [])
doc = json.load(open(path))
second = doc["geometric_means_without_pathologies"]
check(second["left_out"] == ["cs33-t1"], f"summary.json left_out {second['left_out']}")
got = {m["allocator"]: m["time"] for m in second["means"]}
check(math.isclose(got["fitalloc"], 1.0), f"summary.json second mean {got}")
check(math.isclose({m["allocator"]: m["time"] for m in doc["geometric_means"]}["fitalloc"], 0.5),
      "summary.json first mean")

# The same peer without its pathology: nothing is left out.
times[("cs33-t1", "mimalloc")] = 0.1
found = pathologies.outliers(cells_for(times), cases, allocs)
check(pathologies.excluded_cases(found) == [], f"healthy mimalloc: {found}")
finish()
PY

# ---- --baseline: a second libfitalloc.so runs as fitalloc-baseline, interleaved with the rest,
# and can be the reference; a missing file is an error that names the option
echo "== --baseline"
rc=0
"${bench[@]}" -w selftest -a fitalloc,glibc --baseline "$lib" --ref fitalloc-baseline -r 2 \
    --no-study --no-plots --out "$work/ab" >/dev/null 2>"$work/ab.err" || rc=$?
((rc == 0)) || fail "--baseline: exit $rc: $(tail -n 3 "$work/ab.err")"
python3 - "$work/ab" <<'PY' || fail "--baseline: the baseline did not run as expected"
import csv, json, os, sys
res = sys.argv[1]
rows = list(csv.DictReader(open(os.path.join(res, "runs.csv"))))
from checks import bad, finish
groups = [sorted(r["allocator"] for r in rows[i:i + 3]) for i in range(0, len(rows), 3)]
if groups != [["fitalloc", "fitalloc-baseline", "glibc"]] * 2:
    bad.append(f"runs per repetition: {groups}")
if any(r["status"] != "ok" for r in rows):
    bad.append("a run failed: " + ", ".join(f"{r['allocator']} {r['note']}" for r in rows))
if json.load(open(os.path.join(res, "summary.json")))["reference"] != "fitalloc-baseline":
    bad.append("the reference is not fitalloc-baseline")
if "libfitalloc-baseline.snapshot.so" not in open(os.path.join(res, "report.md")).read():
    bad.append("report.md does not name the baseline's library")
finish()
PY
rc=0
"${bench[@]}" -w selftest --baseline "$work/no-such.so" -r 1 --out "$work/unused" >/dev/null \
    2>"$work/ab-missing.err" || rc=$?
if ((rc != 2)) || ! grep -q -- "--baseline: no file" "$work/ab-missing.err"; then
    fail "--baseline of a missing file: exit $rc: $(tail -n 2 "$work/ab-missing.err")"
fi

# ---- plots: PNG files (when matplotlib is there; tools/bench.sh installs it otherwise)
if grep -q "no plots: matplotlib" "$res/report.md"; then
    echo "note: matplotlib is not installed here: plots not checked"
    plots_checked=0
else
    plots_checked=1
    for png in time_rss.png scaling.png; do
        f=$res/plots/$png
        if [[ ! -s "$f" ]] || [[ "$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')" != 89504e470d0a1a0a ]]; then
            fail "$png is missing or not a PNG"
        fi
        grep -q "(plots/$png)" "$res/report.md" || fail "report.md does not show $png"
    done
fi

# ---- the reference allocator alone: tables and plots without a ratio to draw
if ((plots_checked)); then
    echo "== one allocator, with plots"
    rc=0
    "${bench[@]}" -w selftest -a glibc -r 1 --no-study --out "$work/alone" >/dev/null \
        2>"$work/alone.err" || rc=$?
    ((rc == 0)) || fail "-a glibc alone: exit $rc: $(tail -n 3 "$work/alone.err")"
    [[ -s "$work/alone/report.md" ]] || fail "-a glibc alone: no report.md"
fi

((plots_checked)) || finish_checks "no matplotlib to check the plots"
finish_checks

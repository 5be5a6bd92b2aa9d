#!/usr/bin/env bash
# The bench harness end to end, on a tiny suite through tools/bench.sh: it writes the raw
# results, report.md and PNG plots; it interleaves the allocators (the run order in runs.csv);
# a workload that reports corruption, and one that crashes, are marked FAILED while the rest
# goes on; unknown workload or allocator names are errors that list the valid names.
set -euo pipefail

src=${FITALLOC_SOURCE_DIR:?FITALLOC_SOURCE_DIR is not set}
lib=${FITALLOC_LIB:?FITALLOC_LIB is not set}
export CC=${CC:-cc}
work=$(mktemp -d "${TMPDIR:-/tmp}/fitalloc-bench-harness.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

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

res=$work/res
for f in runs.csv figures.csv runs.json summary.json report.md; do
    [[ -s "$res/$f" ]] || fail "$f missing or empty"
done

python3 - "$res" "$allocs" <<'PY' || fail "results do not show what was run (see above)"
import csv, json, os, sys
res, allocs = sys.argv[1], sys.argv[2].split(",")
rows = list(csv.DictReader(open(os.path.join(res, "runs.csv"))))
bad = []
def check(cond, msg):
    if not cond:
        bad.append(msg)

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

report = open(os.path.join(res, "report.md")).read()
for text in ("## Summary", "## All cases", "## FAILED runs", "selftest-corrupt", "CSE3320",
             "| mallocs | 16 405 |"):
    check(text in report, f"report.md lacks {text!r}")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY

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

if ((failures)); then
    echo "test_harness: $failures check(s) failed" >&2
    exit 1
fi
if ((!plots_checked)); then
    echo "test_harness: all other checks passed; skipped: no matplotlib to check the plots"
    exit 77
fi
echo "test_harness: all checks passed"

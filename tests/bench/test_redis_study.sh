#!/usr/bin/env bash
# The bench's Redis study (bench/harness/redis_study.py) with Debian's redis-server: through
# tools/bench.sh on a tiny suite, at scale 0.05 (35,000 + 8,500 keys, 5 MB maxmemory), one
# repetition, for fitalloc (and so fitalloc-mesh beside it) and glibc (whose malloc the study
# has to put before the jemalloc redis-server links). Checks that every load completed (every
# key either kept or evicted, used_memory near maxmemory), that RSS and PSS were sampled through
# the loads and the pause, that report.md's table has each allocator with the ratios of
# redis.json in a sane range, and that the plot is a PNG. Then: without redis-server on PATH the
# study is a note and the bench exits 0; Mesh's row appears when its library has been built; a
# bad --redis-scale is a usage error.
test_name=test_redis_study
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
    echo "skip: redis-server or redis-cli not installed (apt-get install redis-server redis-tools)"
    exit 77
fi

bench=(bash "$src/tools/bench.sh" --lib "$lib" --bin-dir "$work/bin" --no-install
    -w selftest -a fitalloc,glibc -r 1 --no-study)

echo "== the study at scale 0.05"
rc=0
"${bench[@]}" --redis-scale 0.05 --out "$work/res" >"$work/redis.out" 2>"$work/redis.err" || rc=$?
((rc == 0)) || fail "bench with the Redis study exited $rc: $(tail -n 5 "$work/redis.err")"

run_checks "the Redis study's results are not what was run (above)" "$work/res" <<'PY'
import json, os, sys
res = sys.argv[1]
from checks import bad, check, finish, ok_runs, table_rows

doc = json.load(open(os.path.join(res, "redis", "redis.json")))
names = [r["name"] for r in doc["rows"]]
check(names == ["fitalloc", "fitalloc-mesh", "glibc"], f"allocators {names}")
check((doc["keys1"], doc["keys2"], doc["maxmemory"]) == (35000, 8500, 5242880),
      f"size {doc['keys1']}, {doc['keys2']}, {doc['maxmemory']}")
report = open(os.path.join(res, "report.md")).read()
check("## Redis with LRU eviction (Mesh's experiment)" in report, "report.md has no section")
check("| allocator | load s | used_memory MiB | RSS MiB | PSS MiB | RSS / used | PSS / used |"
      in report, "report.md has no table")
check("| Mesh (PLDI 2019, reported) |" in report, "the paper's row is missing")
rows = table_rows(report)
for name, run in ok_runs(doc):
    # The load completed: every key is either in the database or was evicted.
    total = doc["keys1"] + doc["keys2"]
    check(run["keys"] > 0 and run["evicted_keys"] > 0, f"{name}: keys {run['keys']}, "
          f"evicted {run['evicted_keys']}")
    check(run["keys"] + run["evicted_keys"] == total,
          f"{name}: {run['keys']} keys + {run['evicted_keys']} evicted != {total} SETs")
    used = run["used_memory"]
    check(0.85 * doc["maxmemory"] <= used <= 1.05 * doc["maxmemory"],
          f"{name}: used_memory {used} not near maxmemory {doc['maxmemory']}")
    # RSS holds the heap and the program; PSS at most RSS; both not absurd.
    rss_ratio, pss_ratio = run["rss"] / used, run["pss"] / used
    check(1.0 < rss_ratio < 20 and 0.5 < pss_ratio <= rss_ratio,
          f"{name}: RSS / used {rss_ratio:.2f}, PSS / used {pss_ratio:.2f}")
    # Sampled through the loads and the pause, every 0.1 s.
    ts = [s[0] for s in run["samples"]]
    check(len(ts) >= doc["pause_s"] / doc["sample_s"] * 0.8 and ts == sorted(ts)
          and ts[-1] >= run["load_end_s"] + 0.8 * doc["pause_s"],
          f"{name}: samples at {ts} (loads done at {run['load_end_s']})")
    check(all(s[1] > 0 and 0 < s[2] <= s[1] for s in run["samples"]), f"{name}: a sample")
    # The report's row shows the medians of redis.json (one run: that run).
    cells = rows.get(name)
    check(cells is not None, f"report.md has no row for {name}")
    if cells:
        check(cells[4:6] == [f"{rss_ratio:.2f}", f"{pss_ratio:.2f}"],
              f"{name}: report.md's ratios {cells[4:6]}, redis.json's {rss_ratio:.2f}, "
              f"{pss_ratio:.2f}")
        check(cells[1] == f"{used / 2**20:,.1f}", f"{name}: used_memory cell {cells[1]}")
if doc["plot"]:
    path = os.path.join(res, "redis", doc["plot"])
    check(os.path.isfile(path) and open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n",
          f"{path} is missing or not a PNG")
    check(f"(redis/{doc['plot']})" in report, "report.md does not show the plot")
    print("plot: drawn")
else:
    check("matplotlib" in doc["plot_note"] and "No plot: " in report,
          f"no plot and no reason: {doc['plot_note']}")
    print("plot: not drawn (no matplotlib)")
finish()
PY
plot_checked=0
grep -q "^plot: drawn" "$work/check.out" && plot_checked=1

# ---- no redis-server: a PATH without it (the workloads are built already; the bench finds
# the rest by absolute path)
echo "== redis-server missing"
compare_without_programs "without redis-server" -w selftest -a fitalloc,glibc -r 1 --no-study \
    --redis
grep -q "^- Redis study skipped: redis-server not found (Debian: apt-get install redis-server" \
    "$work/missing/report.md" || fail "report.md has no note for the missing redis-server"
[[ ! -e "$work/missing/redis" ]] || fail "a redis/ folder without redis-server"

# ---- Mesh joins the study when bench/support/build_mesh.sh has built it into the bench's
# build directory, and is named as missing otherwise (a stand-in file: only the discovery runs)
echo "== the mesh row"
mkdir -p "$work/meshdir"
rc=0
python3 - "$src/bench" "$lib" "$work/meshdir" <<'PY' || rc=$?
import os, sys
sys.path.insert(0, sys.argv[1])
from harness import allocators as al, redis_study as rs
lib, d = sys.argv[2], sys.argv[3]
fit = al.Allocator("fitalloc", lib)
def names():
    return [a.name for a in rs.study_allocators([fit], d)]
assert names() == ["fitalloc", "fitalloc-mesh"], names()
found, missing = al.discover_peers(["mesh"], lib, d)
assert not found and "build_mesh.sh" in missing[0], missing
open(os.path.join(d, "libmesh.so"), "w").close()
assert names() == ["fitalloc", "fitalloc-mesh", "mesh"], names()
found, missing = al.discover_peers(["mesh"], lib, d)
assert [a.preload for a in found] == [os.path.join(d, "libmesh.so")] and not missing, found
PY
((rc == 0)) || fail "the mesh row's discovery (above)"

# ---- a bad scale is a usage error
rc=0
"${bench[@]}" --redis-scale 0 --out "$work/unused" >/dev/null 2>"$work/bad.err" || rc=$?
if ((rc != 2)) || ! grep -q "redis-scale needs a positive number" "$work/bad.err"; then
    fail "--redis-scale 0: exit $rc (expected 2): $(tail -n 2 "$work/bad.err")"
fi

((plot_checked)) || finish_checks "no matplotlib to draw the plot"
finish_checks

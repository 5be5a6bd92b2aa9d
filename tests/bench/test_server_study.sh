#!/usr/bin/env bash
# The churning-server study (bench/harness/server_study.py). First its failure paths, with
# stand-ins for redis-benchmark: a round that fails and a server that dies mid-run are FAILED
# runs with the reason, not rounds served. Then `tools/bench.sh --study server` at the smoke
# size under fitalloc (and so fitalloc-mesh beside it) and glibc, one repetition: exit 0, every
# run reached the maxmemory and evicted, its requests are its rounds' requests, PSS was sampled
# through the run, and report.md's rows are server.json's medians.
test_name=test_server_study
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
for tool in redis-server redis-cli redis-benchmark; do
    if ! command -v "$tool" >/dev/null; then
        echo "skip: $tool not installed (apt-get install redis-server redis-tools)"
        exit 77
    fi
done

echo "== a failing round and a dying server"
cat >"$work/fails.sh" <<'SH'
#!/bin/sh
exit 3
SH
cat >"$work/kills.sh" <<'SH'
#!/bin/sh
redis-cli -s "$2" shutdown nosave >/dev/null 2>&1
sleep 0.5
exit 0
SH
chmod +x "$work/fails.sh" "$work/kills.sh"
rc=0
PYTHONPATH=$src/bench python3 - "$lib" "$work" <<'PY' || rc=$?
import sys
from harness import allocators as al, redis_study as rs, server_study as ss
lib, work = sys.argv[1], sys.argv[2]
tools, why = rs.locate()
assert tools, why
size = ss.Size(2.0, 8 * 2**20, 1000, 100)
fit = al.Allocator("fitalloc", lib)
r = ss.one_run(fit, tools, f"{work}/fails.sh", size, work)
assert r["status"] == "FAILED" and "redis-benchmark exit 3" in r["note"] and r["rounds"] == 0, r
r = ss.one_run(fit, tools, f"{work}/kills.sh", size, work)
assert r["status"] == "FAILED" and "redis-server died" in r["note"] and r["rounds"] == 0, r
sizes = ss.value_sizes(50)
assert sizes == ss.value_sizes(50) and len(set(sizes)) > 40, sizes
assert min(sizes) >= ss.VALUE_MIN and max(sizes) <= ss.VALUE_MAX, sizes
print("checks: ok")
PY
((rc == 0)) || fail "the study's failure paths (above)"

echo "== the study at the smoke size"
rc=0
bash "$src/tools/bench.sh" --lib "$lib" --bin-dir "$work/bin" --no-install --study server \
    --size smoke -a fitalloc,glibc -r 1 --out "$work/res" >"$work/out" 2>"$work/err" || rc=$?
((rc == 0)) || fail "bench --study server exited $rc: $(tail -n 5 "$work/err")"

run_checks "the server study's results are not what was run (above)" "$work/res" <<'PY'
import json, os, sys
from checks import check, finish, ok_runs, table_rows
res = sys.argv[1]
doc = json.load(open(os.path.join(res, "server", "server.json")))
names = [r["name"] for r in doc["rows"]]
check(names == ["fitalloc", "fitalloc-mesh", "glibc"], f"allocators {names}")
rows = table_rows(open(os.path.join(res, "report.md")).read())
for name, run in ok_runs(doc):
    check(run["rounds"] >= 1 and run["requests"] == run["rounds"] * 2 * doc["requests"],
          f"{name}: {run['requests']} requests in {run['rounds']} rounds")
    check(run["seconds"] >= doc["seconds"], f"{name}: stopped after {run['seconds']} s")
    # The keyspace outgrew the maxmemory: LRU evicted, used_memory stayed near the limit.
    check(run["evicted_keys"] > 0, f"{name}: no key evicted")
    check(0.5 * doc["maxmemory"] <= run["used_memory"] <= 1.05 * doc["maxmemory"],
          f"{name}: used_memory {run['used_memory']}, maxmemory {doc['maxmemory']}")
    ts = [s[0] for s in run["samples"]]
    check(len(ts) >= 0.8 * doc["seconds"] / doc["sample_s"] and ts == sorted(ts),
          f"{name}: samples at {ts}")
    check(0 < run["pss_median"] <= run["pss_peak"], f"{name}: PSS {run['pss_median']}, "
          f"peak {run['pss_peak']}")
    cells = rows.get(name)
    check(cells is not None and cells[0] == f"{run['rounds']:g}"
          and cells[1] == f"{run['rps']:,.0f}"
          and cells[4] == f"{run['pss_median'] / 2**20:,.1f}",
          f"{name}: report.md's row {cells}, server.json's run {run['rounds']}, {run['rps']}")
check(rows.get("glibc", [""] * 6)[2] == "1.00", f"glibc's row {rows.get('glibc')}")
finish()
PY
finish_checks

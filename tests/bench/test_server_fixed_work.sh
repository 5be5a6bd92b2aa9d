#!/usr/bin/env bash
# bench/support/server_fixed_work.py: a bad command line is a usage message and exit 2; two
# rounds with meshing on print one JSON line whose counts come from the live server (CPU, its
# main thread's faults, mappings, PSS) and fitalloc's mesher counters (so the preload took).
# ctest labels: errors
test_name=test_server_fixed_work
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
for tool in redis-server redis-benchmark; do
    if ! command -v "$tool" >/dev/null; then
        echo "skip: $tool not installed (apt-get install redis-server redis-tools)"
        exit 77
    fi
done
script=$src/bench/support/server_fixed_work.py

for args in "" "$lib x" "$lib x 1" "$lib x two"; do
    rc=0
    # shellcheck disable=SC2086
    python3 "$script" $args >"$work/out" 2>"$work/err" || rc=$?
    [[ $rc == 2 ]] || fail "'$args': exit $rc, not 2"
    grep -q '^usage: ' "$work/err" || fail "'$args': no usage message"
done

python3 "$script" "$lib" meshed 2 FITALLOC_MESH=1 >"$work/out" || fail "two rounds: exit $?"
python3 - "$work/out" <<'PY' || fail "two rounds: $(cat "$work/out")"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, lines
r = json.loads(lines[0])
assert r["label"] == "meshed", r
assert r["cpu_s_per_M_requests"] > 0 and r["main_faults"] > 0, r
assert r["mappings"] > 10 and r["pss_mib"] > 1, r
assert "mesh_merges" in r["mesh"] and "mesh_detached" in r["mesh"], r
PY
finish_checks

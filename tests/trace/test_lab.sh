# FITALLOC_TRACE in the policy lab (FITALLOC_MODE=lab): the round trip of test_roundtrip.sh
# (roundtrip.cpp: every kind of call, logged by the program) under first fit with one lock and
# best fit with a heap per thread. The trace's header says mode 1; between the markers the
# trace holds exactly the program's log (op, size, alignment, in and out pointers) on thread 0;
# each thread's records are numbered from 0 with growing times; every free, delete and realloc
# gets a live block in program order.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
need_env CXX

compile "$WORK/roundtrip" "$TRACE_TESTS/roundtrip.cpp"

for config in "first global" "best thread"; do
    read -r policy lock <<<"$config"
    FITALLOC_MODE=lab FITALLOC_POLICY=$policy FITALLOC_LOCK=$lock \
        traced "$WORK/$policy.fat" "$WORK/roundtrip" ||
        { cat "$WORK/err" >&2; fail "$config: the program failed under FITALLOC_TRACE"; }
    [[ ! -s $WORK/err ]] || { cat "$WORK/err" >&2; fail "$config: unexpected messages on stderr"; }
    check_trace '
t = tr.read(sys.argv[1])
assert t.header["mode"] == 1, ("not the lab", t.header)
assert t.partial == 0
tr.check_order(t.records)
tr.check_threads(t.records)
log = tr.read_log(sys.argv[2])
assert len(log) > 30, f"the log has {len(log)} calls"
run = tr.find_run(t.records, log)
assert {r.thread for r in run} == {0}
tr.check_live(t.records)
print(f"{sys.argv[3]}: {len(log)} calls exact among {len(t.records)} records")
' "$WORK/$policy.fat" "$WORK/out" "$config"
done
echo "trace/lab: ok"

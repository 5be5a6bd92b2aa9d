# FITALLOC_TRACE's times against the clock (clock.c: 2,000 fast calls, 80 mallocs 1 ms apart,
# 1,000 fast calls, each between two readings of CLOCK_MONOTONIC by the program itself):
#   - no call's time (start_ns + time_ns) is later than the program's reading just after the
#     call, nor earlier than its reading before the call made a clock_period of calls earlier
#     (docs/trace.md, "Order": early by at most the time of the thread's calls since its last
#     reading of the clock);
#   - once the calls are slow, the thread reads the clock at each one, from the first reading
#     after the fast calls at the latest (64 calls): the last 15 slow calls have their exact
#     time, between the program's readings before and after;
#   - the header says the period, and the thread's times grow.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

compile "$WORK/clock" "$TRACE_TESTS/clock.c"
traced "$WORK/c.fat" env -u FITALLOC_MODE "$WORK/clock" ||
    { cat "$WORK/err" >&2; fail "the program failed under FITALLOC_TRACE"; }
check_trace '
t = tr.read(sys.argv[1])
tr.check_order(t.records)
period = t.header["clock_period"]
assert period == 64, t.header
calls = [tuple(int(x) for x in line.split()) for line in open(sys.argv[2])]
run = tr.find_run(t.records, [c[:5] for c in calls])
start = t.header["start_ns"]
slow = [i for i, c in enumerate(calls) if c[0] == tr.MALLOC and c[1] == 100]
assert len(slow) == 80, len(slow)
for i, (r, c) in enumerate(zip(run, calls)):
    when = start + r.time_ns
    assert when <= c[6], f"call {i}: time {when} after the call ended ({c[6]})"
    earliest = calls[max(i - period, 0)][5]
    assert when >= earliest, f"call {i}: time {when} before {period} calls earlier ({earliest})"
for i in slow[65:]:
    when = start + run[i].time_ns
    assert calls[i][5] <= when <= calls[i][6], f"slow call {i}: {when} not in {calls[i][5:]}"
print(f"clock: {len(calls)} calls within their bounds, the last 15 slow ones exact")
' "$WORK/c.fat" "$WORK/out"
echo "trace/clock: ok"

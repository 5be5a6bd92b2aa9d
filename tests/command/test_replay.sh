# fitalloc replay against a fake fitalloc-replay (fake_replay.py): the options reach it as
# the interface says, its JSON becomes the text table (one row per configuration, "-" for the
# engine's undefined fields), --json and --csv print the same rows; a bad option is refused
# before replaying (2), a missing trace is named (1), the replay's own failures keep their
# status (3: an unreadable trace) and message, and output that is not JSON is reported.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
use_fake_replay
cd "$WORK" || fail "cd $WORK"
make_trace t.fat

run_cmd replay t.fat
expect_rc 0 "replay"
[ "$(last_replay_args | tr '\n' ' ')" = "t.fat --policy all --index tree --json " ] ||
    fail "replay: fitalloc-replay got: $(last_replay_args | tr '\n' ' ')"
expect_in "$WORK/out" "trace t.fat: 2,000 records, 1 threads" "the table's heading"
head -n 2 "$WORK/out" | tail -n 1 | grep -Eq '^config +ops +peak heap' || fail "the table's header"
configs=$(awk 'NR > 3 && !NF { exit } NR > 3 { print $1 }' "$WORK/out" | tr '\n' ' ')
[ "$configs" = "first next best worst segregated tlsf buddy slab " ] || fail "the table's rows: $configs"

run_cmd replay t.fat --policy first,best --index list --engine --samples 50
expect_rc 0 "replay with options"
[ "$(last_replay_args | tr '\n' ' ')" = \
    "t.fat --policy first,best --index list --json --engine --samples 50 " ] ||
    fail "replay with options: fitalloc-replay got: $(last_replay_args | tr '\n' ' ')"
configs=$(awk 'NR > 3 && !NF { exit } NR > 3 { print $1 }' "$WORK/out" | tr '\n' ' ')
[ "$configs" = "first-list best-list engine " ] || fail "the rows with options: $configs"
grep -Eq '^engine .* - +- +- +- +- +- ' "$WORK/out" || fail "the engine row has no '-' cells"
# The engine's heap says what it is (committed, purging deferred), under the table only then.
expect_in "$WORK/out" "engine: heap = the fast engine's committed bytes, with purging deferred" \
    "replay --engine: the engine's note"
run_cmd replay t.fat --policy first --samples 50
expect_rc 0 "replay without --engine"
expect_not_in "$WORK/out" "purging deferred" "replay without --engine: no engine note"

# --json: the replay's document; --csv: its fields, empty for null.
run_cmd replay t.fat --engine --json
expect_rc 0 "replay --json"
"$PYTHON" - "$WORK/out" <<'PYEOF' || fail "replay --json"
import json, sys
doc = json.load(open(sys.argv[1]))
rows = doc["rows"]
assert doc["trace"] == "t.fat" and doc["records"] == 2000, doc
assert [r["config"] for r in rows] == ["first", "next", "best", "worst", "segregated", "tlsf", "buddy", "slab", "engine"]
assert rows[-1]["splits"] is None and rows[0]["splits"] > 0, rows
PYEOF
run_cmd replay t.fat --engine --csv
expect_rc 0 "replay --csv"
fields="config,ops,peak_heap,end_heap,peak_live,frag_free_mean,frag_free_end,frag_largest_mean,frag_largest_end,free_blocks_mean,free_blocks_end,splits,coalesces,mean_ns,p99_ns,failed,unmatched,granted_over_requested,heap_at_peak_live,peak_live_blocks,heap_at_peak_live_blocks"
[ "$(head -n 1 "$WORK/out")" = "$fields" ] || fail "replay --csv header: $(head -n 1 "$WORK/out")"
[ "$(wc -l <"$WORK/out")" = 10 ] || fail "replay --csv: $(wc -l <"$WORK/out") lines, expected 10"
grep -Eq '^engine,2000,[0-9]+,[0-9]+,[0-9]+,[0-9.]+,[0-9.]+,,,,,,,' "$WORK/out" ||
    fail "replay --csv: the engine row: $(grep '^engine' "$WORK/out")"

# Refused before replaying.
: >"$FAKE_REPLAY_LOG"
for bad in "--policy fastest" "--policy first,,best" "--index hash" "--samples 0" "--json --csv"; do
    # shellcheck disable=SC2086 # the options are meant to be split
    run_cmd replay t.fat $bad
    expect_rc 2 "replay $bad"
    expect_in "$WORK/err" "usage: fitalloc replay" "replay $bad"
done
[ ! -s "$FAKE_REPLAY_LOG" ] || fail "a bad option still ran fitalloc-replay"
run_cmd replay missing.fat
expect_rc 1 "a missing trace"
expect_in "$WORK/err" "fitalloc replay: missing.fat: no such file" "a missing trace"

# The replay's failures: its status and its message.
echo "not a trace" >bad.fat
run_cmd replay bad.fat
expect_rc 3 "a file that is not a trace"
expect_in "$WORK/err" "fitalloc replay: fitalloc-replay: bad.fat: byte 0: not a fitalloc trace" \
    "a file that is not a trace"
FAKE_REPLAY_FAIL=3 "$CMD" replay t.fat >/dev/null 2>"$WORK/err" && fail "a failed replay exited 0"
expect_in "$WORK/err" "byte 4160: record 85 has a bad check byte" "a bad record"
printf '#!/bin/sh\necho "not json"\n' >junk-replay
chmod +x junk-replay
FITALLOC_REPLAY=$WORK/junk-replay "$CMD" replay t.fat >/dev/null 2>"$WORK/err" &&
    fail "a replay printing no JSON was accepted"
expect_in "$WORK/err" "printed no valid JSON" "a replay printing no JSON"
FITALLOC_REPLAY=$WORK/nonexistent "$CMD" replay t.fat >/dev/null 2>"$WORK/err" &&
    fail "a missing FITALLOC_REPLAY was accepted"
expect_in "$WORK/err" "FITALLOC_REPLAY=$WORK/nonexistent: no such file" "a missing FITALLOC_REPLAY"
echo "command/replay: ok"

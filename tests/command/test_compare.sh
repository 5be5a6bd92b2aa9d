# fitalloc compare against a fake fitalloc-replay: it replays every policy with --map-out and
# writes DIR/compare.png and one PNG per configuration (real sizes), replay.json (the replay's
# rows, every configuration and the engine) and replay.md (a Markdown row for each), and prints
# the table; --keep-csv keeps the replay's files; a missing -o is a usage error.
# test_compare_some.sh: --policy and --index.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
need_matplotlib
use_fake_replay
cd "$WORK" || fail "cd $WORK"
make_trace t.fat

run_cmd compare t.fat -o maps --engine --keep-csv --cells 600x300
expect_rc 0 "compare"
args=$(last_replay_args | tr '\n' ' ')
[[ "$args" == "t.fat --policy all --index tree --json --engine --map-out "* ]] ||
    fail "compare: fitalloc-replay got: $args"
expect_png maps/compare.png 100000 "compare"
for config in first next best worst segregated tlsf buddy slab; do
    expect_png "maps/$config.png" 40000 "compare: $config"
    grep -Eq "^\| $config \| 2,000 \|" maps/replay.md || fail "replay.md has no row for $config"
done
[ ! -e maps/engine.png ] || fail "compare drew a map for the engine, which has none"
grep -Eq '^\| engine \| 2,000 \|.*\| - \|' maps/replay.md || fail "replay.md: the engine row"
grep -q '^|---|' maps/replay.md || fail "replay.md is not a Markdown table"
"$PYTHON" - maps/replay.json <<'PYEOF' || fail "replay.json"
import json, sys
doc = json.load(open(sys.argv[1]))
configs = [r["config"] for r in doc["rows"]]
assert configs == ["first", "next", "best", "worst", "segregated", "tlsf", "buddy", "slab", "engine"], configs
assert doc["trace"] == "t.fat" and all(r["ops"] == 2000 for r in doc["rows"]), doc
PYEOF
[ "$(awk 'NR > 3 && !NF { exit } NR > 3 { print $1 }' "$WORK/out" | tr '\n' ' ')" = "first next best worst segregated tlsf buddy slab engine " ] ||
    fail "compare did not print the table: $(cat "$WORK/out")"
[ -s maps/csv/first.blocks.csv ] && [ -s maps/csv/segregated.series.csv ] || fail "--keep-csv: $(ls -R maps)"

run_cmd compare t.fat
expect_rc 2 "compare without -o"
expect_in "$WORK/err" "the following arguments are required: -o/--output" "compare without -o"
echo "command/compare: ok"

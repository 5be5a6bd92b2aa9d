# fitalloc compare of some policies, with the list index: only those configurations are
# replayed (the options reach fitalloc-replay) and drawn, under their -list names.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
need_matplotlib
use_fake_replay
cd "$WORK" || fail "cd $WORK"
make_trace t.fat

run_cmd compare t.fat -o maps2 --policy first,best --index list --cells 300x200
expect_rc 0 "compare --policy first,best --index list"
args=$(last_replay_args | tr '\n' ' ')
[[ "$args" == "t.fat --policy first,best --index list --json --map-out "* ]] ||
    fail "compare: fitalloc-replay got: $args"
expect_png maps2/compare.png 40000 "compare of two"
expect_png maps2/first-list.png 40000 "compare: first-list"
expect_png maps2/best-list.png 40000 "compare: best-list"
[ ! -e maps2/worst-list.png ] && [ ! -e maps2/worst.png ] || fail "compare drew a policy not asked for"
"$PYTHON" - maps2/replay.json <<'PYEOF' || fail "replay.json of two"
import json, sys
configs = [r["config"] for r in json.load(open(sys.argv[1]))["rows"]]
assert configs == ["first-list", "best-list"], configs
PYEOF
echo "command/compare_some: ok"

# End to end on a real program, drawn: the trace of Python building a dictionary (PYTHONMALLOC=malloc) through the real fitalloc-replay,
# `fitalloc map` (a PNG of the heap over time) and `fitalloc compare` (every policy's map, the
# table as Markdown and JSON, one row per policy).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
need_interposition
need_matplotlib
unset FITALLOC_REPLAY
cd "$WORK" || fail "cd $WORK"
run_cmd run --trace t.fat -- env PYTHONMALLOC=malloc "$PYTHON" -S -c \
    'd = {str(i): [i, str(i) * 3] for i in range(2000)}; print(len(d))'
expect_rc 0 "run --trace -- python3"

run_cmd map t.fat --policy first -o first.png
expect_rc 0 "map --policy first"
expect_png first.png 20000 "map of the python3 trace"

run_cmd compare t.fat -o cmp
expect_rc 0 "compare"
expect_png cmp/compare.png 40000 "compare"
for p in first next best worst segregated tlsf buddy slab; do
    expect_png "cmp/$p.png" 20000 "compare: $p"
    grep -q "| $p " cmp/replay.md || fail "compare: no row for $p in replay.md"
done
"$PYTHON" -c 'import json, sys; rows = json.load(open("cmp/replay.json"))["rows"]; sys.exit(len(rows) != 8)' ||
    fail "compare: replay.json does not have the eight policies"
echo "ok: maps of the python3 trace drawn"

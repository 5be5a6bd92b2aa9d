# fitalloc map, its input: a map of many blocks (downsampled into cells) draws; a bad map file,
# bad options, a missing directory or trace, an unknown image format, a missing matplotlib get
# a message. The cell computation (mapdata.area_cover) is checked against a direct sum.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
need_matplotlib
use_fake_replay
cd "$WORK" || fail "cd $WORK"
make_trace t.fat

# Many blocks: drawn through the cells at the same cost.
FAKE_REPLAY_SYNTH=100000 "$CMD" map t.fat -o many.png 2>"$WORK/err" ||
    fail "a map of 100,000 blocks: $(cat "$WORK/err")"
expect_png many.png 20000 "a map of 100,000 blocks"
expect_in "$WORK/err" "100,000 blocks" "a map of 100,000 blocks"

# Bad input.
FAKE_REPLAY_BADMAP=1 "$CMD" map t.fat -o bad.png 2>"$WORK/err" && fail "a bad blocks file was drawn"
expect_in "$WORK/err" "best.blocks.csv: the first line is 'bogus'" "a bad blocks file"
run_cmd map t.fat --policy all
expect_rc 2 "map --policy all"
run_cmd map t.fat --cells 10
expect_rc 2 "map --cells 10"
run_cmd map t.fat -o nodir/map.png
expect_rc 1 "a missing directory"
expect_in "$WORK/err" "the directory nodir does not exist" "a missing directory"
run_cmd map t.fat -o map.xyz
expect_rc 1 "an image format matplotlib does not know"
expect_in "$WORK/err" "fitalloc map: map.xyz: cannot write the image" "-o map.xyz"
run_cmd map missing.fat
expect_rc 1 "a missing trace"
expect_in "$WORK/err" "missing.fat: no such file" "a missing trace"

# Without matplotlib (a package of that name that fails to import, first on the path, for the
# first Python and the one it turns to): the message says what to install.
mkdir -p nomatplotlib/matplotlib
echo 'raise ImportError("not here")' >nomatplotlib/matplotlib/__init__.py
PYTHONPATH=$WORK/nomatplotlib "$CMD" map t.fat -o none.png 2>"$WORK/err" &&
    fail "map ran without matplotlib"
expect_in "$WORK/err" "fitalloc map: matplotlib is not installed" "map without matplotlib"
expect_in "$WORK/err" "install python3-matplotlib" "map without matplotlib"

# The cells: every rectangle's area spread over the cells it covers, exactly.
"$PLOT_PYTHON" -B - "$HERE/../../python" <<'PYEOF' || fail "mapdata.area_cover differs from a direct sum"
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from fitalloc_cli.mapdata import area_cover
rng = np.random.default_rng(7)
n, w, h, xmax, ymax = 300, 23, 17, 1000.0, 500.0
x0 = rng.uniform(0, xmax, n); x1 = np.minimum(x0 + rng.uniform(0, 300, n), xmax)
y0 = rng.uniform(0, ymax, n); y1 = np.minimum(y0 + rng.uniform(0, 60, n), ymax)
weight = rng.uniform(0.5, 2, n)
got = area_cover(x0, x1, y0, y1, weight, xmax, ymax, w, h)
cw, ch = xmax / w, ymax / h
ox = np.clip(np.minimum(x1[:, None], (np.arange(w) + 1) * cw) - np.maximum(x0[:, None], np.arange(w) * cw), 0, None) / cw
oy = np.clip(np.minimum(y1[:, None], (np.arange(h) + 1) * ch) - np.maximum(y0[:, None], np.arange(h) * ch), 0, None) / ch
want = np.einsum("k,kj,ki->ji", weight, oy, ox)
err = np.abs(got - want).max()
print(f"area_cover: largest difference {err:.2e}")
sys.exit(0 if err < 1e-9 else 1)
PYEOF
echo "command/map_input: ok"

# fitalloc map against a fake fitalloc-replay: the options and --map-out reach it, the image is
# a PNG (or SVG by its name) of a real size, showing used blocks and free space (pixels of the
# free colour and of the block colours); the default name; the config of --index list is read.
# test_map_input.sh has the large maps and the bad input.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
need_matplotlib
use_fake_replay
cd "$WORK" || fail "cd $WORK"
make_trace t.fat

run_cmd map t.fat --policy worst -o worst.png
expect_rc 0 "map"
args=$(last_replay_args | tr '\n' ' ')
[[ "$args" == "t.fat --policy worst --index tree --json --map-out "* ]] ||
    fail "map: fitalloc-replay got: $args"
expect_png worst.png 40000 "map"
expect_in "$WORK/err" "worst.png: worst, 2,000 operations" "map's summary line"

# The picture: the free colour (salmon) and used blocks (not white, not salmon) both cover a
# real part of the heap panel.
"$PLOT_PYTHON" - worst.png <<'PYEOF' || fail "map: the image does not show free and used blocks"
import sys
import matplotlib.image as mpimg
import numpy as np
img = mpimg.imread(sys.argv[1])[..., :3]
free = np.all(np.abs(img - np.array([0.96, 0.66, 0.62])) < 0.03, axis=-1).mean()
grey = np.all(np.abs(img - img[..., :1]) < 0.02, axis=-1)  # white, black, greys: not blocks
salmonish = np.all(np.abs(img - np.array([0.96, 0.66, 0.62])) < 0.15, axis=-1)
used = (~grey & ~salmonish).mean()
print(f"free {free:.3f}, used {used:.3f} of the pixels")
sys.exit(0 if free > 0.02 and used > 0.10 else 1)
PYEOF

# The default name, --index list (config worst-list), SVG by the name, fewer cells.
run_cmd map t.fat
expect_rc 0 "map with the defaults"
expect_png t-best.png 40000 "map with the defaults"
run_cmd map t.fat --policy first --index list --samples 100 --cells 300x200 -o map.svg
expect_rc 0 "map --index list"
[[ "$(last_replay_args | tr '\n' ' ')" == "t.fat --policy first --index list --json --samples 100 --map-out "* ]] ||
    fail "map --index list: fitalloc-replay got: $(last_replay_args | tr '\n' ' ')"
grep -q "<svg" map.svg || fail "map.svg is not an SVG"
expect_in "$WORK/err" "first-list" "map --index list"
echo "command/map: ok"

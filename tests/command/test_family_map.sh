# The families' structure (python/fitalloc_cli/familymap.py) on heaps worked out by hand, then
# `fitalloc map` through the real fitalloc-replay on a trace written here: under buddy, tlsf
# and slab a second image, FILE-structure.png, whose summary line counts what the hand-made
# trace leaves; under best fit none.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
need_matplotlib
unset FITALLOC_REPLAY
cd "$WORK" || fail "cd $WORK"

echo "== the structures of hand-made heaps"
PYTHONPATH="$FITALLOC_SOURCE_DIR/python" "$PLOT_PYTHON" - <<'PY' || fail "familymap (above)"
import numpy as np
from fitalloc_cli import familymap as fm
from fitalloc_cli.mapdata import HeapMap

def heap(blocks, series):
    """blocks: (alloc_op, free_op, whole start, whole size); the map files hold the payload."""
    b = np.array([(a, f, s + 16, z - 16) for a, f, s, z in blocks], dtype=np.int64)
    return HeapMap("buddy", 10, b, np.array(series, dtype=np.float64))

# Buddy: 128 at 0, 1024 at 1024 (freed at op 3), 128 at 128, a heap of 2048 at the peak (op 2,
# live 1200): the free gap 256-1024 is two blocks, 256 at 256 and 512 at 512.
hm = heap([(0, -1, 0, 128), (1, 3, 1024, 1024), (2, -1, 128, 128)],
          [(0, 128, 100, 0, 0, 0), (2, 2048, 1200, 512, 0, 0), (3, 2048, 200, 0, 0, 0)])
m = fm.peak_moment(hm)
assert (m.op, m.heap) == (2, 2048), (m.op, m.heap)
assert m.starts.tolist() == [0, 128, 1024] and m.sizes.tolist() == [128, 128, 1024]
tree = fm.buddy_tree(m)
assert tree.blocks == [(0, 128, 7, True), (128, 128, 7, True), (256, 256, 8, False),
                       (512, 512, 9, False), (1024, 1024, 10, True)], tree.blocks
# The root (2048) is split into two 1024s, the first 1024 into 512s, the first 512 into 256s,
# the first 256 into the two used 128s.
assert tree.top_order == 11 and tree.splits == [(0, 256, 8), (0, 512, 9), (0, 1024, 10),
                                                (0, 2048, 11)], tree.splits

# TLSF: gaps of 48 (list 0/3), 100 (0/6) and 1100 (first level 10, subrange 1: [1088, 1152)).
m = fm.Moment(5, 4000, np.array([48, 1100, 2200]), np.array([1052, 1000, 700]))
assert fm.gaps(m) == [(0, 48), (2100, 100), (2900, 1100)], fm.gaps(m)
assert fm.tlsf_lists(m) == {(0, 3): 1, (0, 6): 1, (10, 1): 1}, fm.tlsf_lists(m)
assert fm.tlsf_list(1024) == (10, 0) and fm.tlsf_list(1087) == (10, 0)
assert fm.tlsf_list(1088) == (10, 1) and fm.tlsf_list(255) == (0, 15)

# Slab: page 0 holds two 128-byte blocks, pages 1-2 a 100 KiB run, page 3 is free.
k = 64 * 1024
m = fm.Moment(1, 4 * k, np.array([0, 128, k]), np.array([128, 128, 100 * 1024]))
pages = fm.slab_pages(m)
assert [(p.kind, p.block) for p in pages] == [("class", 128), ("run", 100 * 1024),
                                              ("run", 100 * 1024), ("free", 0)], pages
assert abs(pages[0].fill - 256 / k) < 1e-12
assert fm.family_of("buddy") == "buddy" and fm.family_of("tlsf-list") == "tlsf"
assert fm.family_of("best") is None
print("familymap: ok")
PY

echo "== fitalloc map on a trace"
# Python's start, traced: enough blocks for every family's structure.
need_interposition
run_cmd run --trace t.fat -- "$PYTHON" -S -c 'print(1)'
expect_rc 0 "run --trace -- python3"
for p in buddy tlsf slab; do
    run_cmd map t.fat --policy $p -o $p.png
    expect_rc 0 "map --policy $p"
    expect_png $p.png 20000 "map of $p"
    expect_png $p-structure.png 20000 "the structure of $p"
    cp "$WORK/err" "$WORK/err-$p"
done
split_tree="the split tree: [0-9,]+ used and [0-9,]+ free blocks, [1-9][0-9,]* split nodes"
grep -Eq "buddy-structure.png: $split_tree" "$WORK/err-buddy" ||
    fail "buddy's summary does not count split nodes: $(cat "$WORK/err-buddy")"
expect_in "$WORK/err-tlsf" "tlsf-structure.png: the lists: " "tlsf's summary"
expect_in "$WORK/err-slab" "slab-structure.png: the pages: " "slab's summary"
run_cmd map t.fat --policy best -o best.png
expect_rc 0 "map --policy best"
[ ! -e best-structure.png ] || fail "best fit has no family structure to draw"
echo "ok: the families' structures"

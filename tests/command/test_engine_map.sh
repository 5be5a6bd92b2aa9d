# `fitalloc map --engine [--mesh]` through the real fitalloc-replay, on the trace of a program
# that frees a random 90 % of its 64-byte blocks: the image of the engine's pages, and with
# meshing the pages' blue tint (memory meshed or given back) where the heap was fragmented,
# which the map without meshing never has; the summary line says how much was meshed.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
need_interposition
need_matplotlib
unset FITALLOC_REPLAY
cd "$WORK" || fail "cd $WORK"

cat >fragment.c <<'C'
#include <stdlib.h>
#include <string.h>
int main(void)
{
    enum { N = 40000 };
    static void *p[N];
    unsigned r = 12345;
    for (int i = 0; i < N; i++)
        memset(p[i] = malloc(64), 1, 64);
    for (int i = 0; i < N; i++) {
        r = r * 1103515245u + 12345u;
        if ((r >> 16) % 10) {
            free(p[i]);
            p[i] = 0;
        }
    }
    return 0;
}
C
"${CC:-cc}" -O2 -o fragment fragment.c || fail "cc fragment.c"
run_cmd run --trace t.fat -- ./fragment
expect_rc 0 "run --trace -- ./fragment"

run_cmd map t.fat --engine --mesh -o mesh.png
expect_rc 0 "map --engine --mesh"
expect_png mesh.png 10000 "map of the engine with meshing"
expect_in "$WORK/err" "engine-mesh, " "map --engine --mesh: summary"
expect_in "$WORK/err" "B in meshed pages" "map --engine --mesh: summary"
expect_not_in "$WORK/err" " 0 B in meshed pages" "map --engine --mesh: something meshed"
# Its figures say what they are: the end and the peak, committed, with purging deferred.
expect_in "$WORK/err" "committed at any operation" "map --engine --mesh: the peak named"
expect_in "$WORK/err" "at the sample points; purging deferred" "map --engine --mesh: the curve named"

run_cmd map t.fat --engine -o plain.png
expect_rc 0 "map --engine"
expect_png plain.png 10000 "map of the engine"
expect_in "$WORK/err" " 0 B in meshed pages" "map --engine: summary"

run_cmd map t.fat --mesh -o nothing.png
expect_rc 1 "map --mesh without --engine"
expect_in "$WORK/err" "give --engine too" "map --mesh without --engine"

# The pages panel (the image's upper half): pixels tinted blue with meshing, none without.
"$PLOT_PYTHON" - <<'PY' || fail "the maps' colours (above)"
import matplotlib.image as mpimg

def tinted(path):
    img = mpimg.imread(path)[..., :3]
    top = img[: img.shape[0] // 2]
    # Meshed pages go towards (0.25, 0.55, 1.0); viridis never reaches 0.6 in blue.
    blue = (top[..., 2] > 0.65) & (top[..., 0] < 0.6)
    return int(blue.sum())

mesh, plain = tinted("mesh.png"), tinted("plain.png")
assert mesh > 2000, f"mesh.png: {mesh} blue pixels in the pages panel"
assert plain == 0, f"plain.png: {plain} blue pixels in the pages panel"
print(f"blue pixels: {mesh} with meshing, {plain} without")
PY
echo "ok: the engine's pages drawn, meshing visible"

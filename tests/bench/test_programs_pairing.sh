#!/usr/bin/env bash
# ctest labels: unit
# The timed real-program study's figures (bench/harness/programs_timed.py) on a made-up list of
# runs, shuffled: time and CPU time are the median over rounds of each run's ratio to glibc's
# run of the same round (not the ratio of the medians, nor a pairing by position in the list);
# a round where either run failed is left out; peak RSS is the ratio of the medians; the
# geometric means leave out start-up. The rounds' orders: a permutation, the same for the same
# seed, program and round, not always the same.
test_name=test_programs_pairing
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

export PYTHONPATH="$src/bench:$PYTHONPATH"
run_checks "the study's figures (above)" <<'PY'
import math, random
from checks import check, finish
from harness import allocators as al
from harness import programs_timed as pt
from harness import study_programs as sp

allocs = [al.Allocator(n, "") for n in ("fitalloc", "peer", "glibc")]
runs = []


def add(program, allocator, walls, cpus=None, peaks=None, failed=()):
    for r, wall in enumerate(walls):
        runs.append({"program": program, "allocator": allocator, "round": r, "wall_s": wall,
                     "cpu_s": (cpus or walls)[r], "peak_kib": (peaks or [1000] * 5)[r],
                     "error": "exit 1" if r in failed else ""})


# glibc's time moves from round to round; fitalloc's ratios are 0.9 0.8 1.2 0.95 1.0: paired
# 0.95, while the ratio of the medians is 1.6 / 2.0 = 0.8.
add("p", "glibc", [1.0, 2.0, 1.0, 2.0, 3.0], cpus=[1.0] * 5, peaks=[100, 200, 300, 400, 500])
add("p", "fitalloc", [0.9, 1.6, 1.2, 1.9, 3.0], cpus=[0.5, 0.6, 0.7, 0.8, 0.9],
    peaks=[150] * 5)
# The peer failed in round 4: ratios 2.0 0.5 2.0 0.5, paired 1.25.
add("p", "peer", [2.0, 1.0, 2.0, 1.0, 9.0], failed=(4,))
# glibc failed in round 1: that round is left out for every allocator.
add("q", "glibc", [1.0, 1.0, 1.0, 1.0, 1.0], failed=(1,))
add("q", "fitalloc", [0.5, 0.1, 0.5, 0.5, 0.5])
add("q", "peer", [1.0] * 5)
add("startup", "glibc", [1.0] * 5)
add("startup", "fitalloc", [10.0] * 5)
add("startup", "peer", [1.0] * 5)
random.Random(1).shuffle(runs)


def near(a, b):
    return abs(a - b) < 1e-9


def program(name):
    return pt.Timed(name, "x", "x", "x", None, in_means=name != "startup")


rows = [pt.aggregate(program(n), sp.Invocation(["x"]), [r for r in runs if r["program"] == n],
                     allocs) for n in ("p", "q", "startup")]
p, q, startup = rows
fit = p["ratios"]["fitalloc"]
check(near(fit["wall_s"], 0.95), f"p: fitalloc's paired time {fit['wall_s']}, not 0.95")
check(near(fit["cpu_s"], 0.7), f"p: fitalloc's paired CPU time {fit['cpu_s']}, not 0.7")
check(near(fit["peak_kib"], 0.5), f"p: fitalloc's peak RSS {fit['peak_kib']}, not 150/300")
check(near(p["ratios_of_medians"]["fitalloc"]["wall_s"], 0.8),
      f"p: fitalloc's ratio of the medians {p['ratios_of_medians']['fitalloc']}, not 0.8")
check(near(p["ratios"]["peer"]["wall_s"], 1.25),
      f"p: the peer's paired time {p['ratios']['peer']['wall_s']}, not 1.25 (round 4 failed)")
check(near(q["ratios"]["fitalloc"]["wall_s"], 0.5),
      f"q: fitalloc's paired time {q['ratios']['fitalloc']['wall_s']}, not 0.5 (glibc's "
      "round 1 failed)")
check(near(pt.paired([r for r in runs if r["program"] == "q"], "glibc", "wall_s"), 1.0),
      "q: glibc against itself is not 1")

doc = {"allocators": ["fitalloc", "peer", "glibc"], "programs": rows}
gm = pt._geomeans(doc, "ratios")
check(near(gm["fitalloc"]["wall_s"], math.sqrt(0.95 * 0.5)),
      f"fitalloc's geometric mean {gm['fitalloc']['wall_s']}, not that of 0.95 and 0.5 "
      "(start-up left out)")
check(near(gm["peer"]["wall_s"], math.sqrt(1.25)), f"the peer's mean {gm['peer']['wall_s']}")

names = ["a", "b", "c", "d", "e", "glibc"]
orders = [pt.order(names, pt.SEED, "p", r) for r in range(5)]
check(all(sorted(o) == sorted(names) for o in orders), f"an order is not a permutation: {orders}")
check(orders[2] == pt.order(names, pt.SEED, "p", 2), "the same seed gave another order")
after_glibc = {o[o.index("glibc") + 1] for o in orders if o[-1] != "glibc"}
check(len({tuple(o) for o in orders}) > 1 and len(after_glibc) > 1,
      f"the rounds' orders do not change: {orders}")
finish()
PY
finish_checks

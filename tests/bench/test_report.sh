#!/usr/bin/env bash
# The bench report's parts that judge a run, on made-up results (no bench run): the section
# "Where a peer is ahead" lists a peer that beat fitalloc in every run and not one within
# noise; the machine's load is recorded and a busy machine is warned about; every plot gives
# an allocator the palette's colour; the plots' details (scaling says higher is better,
# id1206's caption names every panel, whole-number ticks, the buddy tree in MiB, the compare
# sheet's title names the program and its table is readable).
test_name=test_report
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

py=""
for candidate in python3 /usr/bin/python3; do
    if "$candidate" -c 'import matplotlib, numpy' 2>/dev/null; then
        py=$candidate
        break
    fi
done
if [[ -z "$py" ]]; then
    py=python3
    plots=0
else
    plots=1
fi

echo "== losses and load (no plots needed)"
PYTHONPATH="$src/bench:$PYTHONPATH" "$py" - "$work" <<'PY' || fail "losses or load (see above)"
import json, os, sys
from harness import losses, machine_load, report, summary
from harness.runner import Run

work = sys.argv[1]
from checks import bad, check, finish

def cells_for(times, rss=None):
    """times: (case, allocator) -> wall seconds of each repetition."""
    runs = []
    for (case, alloc), ts in times.items():
        for rep, t in enumerate(ts):
            kib = (rss or {}).get((case, alloc), 1024)
            runs.append(Run(seq=len(runs) + 1, rep=rep, case=case, workload=case, threads=None,
                            allocator=alloc, position=0, wall_s=t, user_s=t, sys_s=0.0,
                            maxrss_kib=kib, checksum="x"))
    return summary.summarize(runs)

times = {
    # glibc beats fitalloc in every run: ahead beyond noise, fitalloc 2x its median
    ("shapes", "fitalloc"): [1.0, 1.1, 1.2], ("shapes", "glibc"): [0.5, 0.55, 0.6],
    # jemalloc's median is ahead, its slowest run is not: within noise
    ("shapes", "jemalloc"): [0.9, 1.05, 1.15],
    # a lab configuration and fitalloc's secure mode are not peers, however fast
    ("shapes", "lab-best"): [0.1, 0.1, 0.1], ("shapes", "fitalloc-secure"): [0.2, 0.2, 0.2],
    # fitalloc ahead: nothing to list
    ("tree", "fitalloc"): [0.5, 0.5, 0.5], ("tree", "glibc"): [0.9, 1.0, 1.0],
    # one run each: not judged
    ("once", "fitalloc"): [2.0], ("once", "glibc"): [1.0],
}
rss = {("tree", "fitalloc"): 4096, ("tree", "glibc"): 2048}
cells = cells_for(times, rss)
allocs_of = {c: [a for (cc, a) in times if cc == c] for c in ("shapes", "tree", "once")}
found = losses.find(cells, ["shapes", "tree", "once"], allocs_of)
got = {(x.case, x.peer, x.metric): x for x in found}
check(set(got) == {("shapes", "glibc", "wall"), ("shapes", "jemalloc", "wall"),
                   ("tree", "glibc", "rss")}, f"found {sorted(got)}")
g = got.get(("shapes", "glibc", "wall"))
check(g is not None and g.beyond_noise and abs(g.ratio - 2.0) < 1e-9, f"glibc on shapes: {g}")
j = got.get(("shapes", "jemalloc", "wall"))
check(j is not None and not j.beyond_noise, f"jemalloc on shapes: {j}")
section = "\n".join(losses.section(found, ["tree"]))
print(section)
check("## Where a peer is ahead" in section, "no section title")
check("| shapes | glibc | 2.00x | 1.100 (1.000-1.200) | 0.550 (0.500-0.600) |" in section,
      "glibc's row, with both min-max, is missing")
check("| shapes | jemalloc |" not in section and "shapes jemalloc 1.05x" in section,
      "jemalloc must be listed as within noise, not in the table")
check("| tree* | glibc | 2.00x | 4.0 (4.0-4.0) | 2.0 (2.0-2.0) |" in section,
      "the peak RSS row (short case marked) is missing")
check("lab-best" not in section and "fitalloc-secure" not in section and "once" not in section,
      "a lab configuration, fitalloc-secure or a case with one run is listed")
check("max is below fitalloc's min" in section, "the section does not state its rule")
term = "\n".join(losses.terminal_lines(found))
check("wall time: shapes glibc 2.00x; 1 more within noise" in term, f"terminal lines: {term}")

# The load: the rule of the warning, and a real record from /proc and getrusage.
quiet = machine_load.describe(0.5, 0.7, 100.0, 90.0, 10.0, 2)
busy = machine_load.describe(0.5, 0.7, 100.0, 90.0, 80.0, 2)  # others: 40 % of 200 s
loaded = machine_load.describe(7.0, 12.0, 100.0, 90.0, 1.0, 2)  # load average above cores
own_threads = machine_load.describe(0.3, 4.1, 100.0, 190.0, 0.0, 2)  # the bench's own load
check(not quiet["busy"] and busy["busy"] and loaded["busy"] and not own_threads["busy"],
      f"busy rule: {quiet['busy']} {busy['busy']} {loaded['busy']} {own_threads['busy']}")
text = "\n".join(machine_load.header_lines(busy))
check("load average (1 min) 0.50 at the start of the timed runs, 0.70 at the end" in text
      and "took 80 s of CPU time during the runs (40% of the machine's 200 s)" in text
      and "WARNING: the machine was busy" in text and "rule:" in text, f"header: {text}")
check("WARNING" not in "\n".join(machine_load.header_lines(quiet)), "a quiet machine warned")
before = machine_load.start()
sum(i * i for i in range(300000))  # some CPU time of the bench's own
rec = machine_load.finish(before)
for k in ("load_start", "load_end", "others_cpu_s", "others_share", "own_cpu_s", "cores"):
    check(rec.get(k) is not None, f"load record lacks {k}: {rec}")
check(rec["own_cpu_s"] > 0, f"own CPU time {rec['own_cpu_s']}")

# report.md: the header holds the load, the section comes before All cases.
meta = {"started": "now", "command": "x", "machine": "m", "size": "smoke", "reps": 3,
        "reference": "glibc", "runs": 9, "failed": 0, "duration": "1s", "allocators": [],
        "notes": [], "load": busy}
path = os.path.join(work, "report.md")
report.write(path, meta, ["means"], losses.section(found), ["table"], [], [], [], [])
doc = open(path).read()
check("- machine load: load average" in doc and "**WARNING: the machine was busy" in doc,
      "report.md's header lacks the load or its warning")
check(0 < doc.find("## Where a peer is ahead") < doc.find("## All cases"),
      "the section is missing or after All cases")
finish()
PY

if ((plots)); then
    echo "== one palette, and the plots' details"
    PYTHONPATH="$src/bench:$src/python:$PYTHONPATH" "$py" - "$work" <<'PY' || fail "plots (see above)"
import os, sys
import matplotlib
matplotlib.use("Agg")
from matplotlib.colors import to_hex
from harness import palette, plots, redis_study, studies, summary
from harness.allocators import LAB_CONFIGS, OPTIONAL_NAMES, PEER_NAMES, BASELINE, BASELINE_SECURE
from harness.runner import Run

work = sys.argv[1]
from checks import bad, check, finish

named = PEER_NAMES + OPTIONAL_NAMES + [BASELINE, BASELINE_SECURE] + list(LAB_CONFIGS)
cols = [palette.colour(n) for n in named]
check(len(set(cols)) == len(cols), "two allocators share a colour")
check(palette.colour("lab-new") == palette.colour("lab-new"), "an unknown name's colour varies")

# Keep every figure the plots draw (their _save closes them).
figures = {}
real_save = plots._save
def keep(fig, path, **layout):
    figures[os.path.basename(path)] = fig
    fig.savefig(path)
plots._save = keep

def colours_of(fig):
    """label -> colour of every labelled bar, line or error bar of the figure."""
    out = {}
    for ax in fig.axes:
        for h, label in zip(*ax.get_legend_handles_labels()):
            if hasattr(h, "patches"):
                c = h.patches[0].get_facecolor()
            elif hasattr(h, "lines"):
                c = h.lines[0].get_color()
            else:
                c = h.get_color()
            out[label] = to_hex(c)
    return out

allocs = ["fitalloc", "fitalloc-secure", "mimalloc", "jemalloc", "glibc", "scudo", "tcmalloc"]
runs = []
for a in allocs + ["lab-best", "lab-best-thread"]:
    for case in ("churn", "cs33-scaling:1", "cs33-scaling:2"):
        for rep in range(2):
            t = 0.5 + 0.1 * rep + (0.3 if a.startswith("lab") else 0.0)
            runs.append(Run(seq=len(runs) + 1, rep=rep, case=case, workload=case, threads=None,
                            allocator=a, position=0, wall_s=t, user_s=t, sys_s=0.0,
                            maxrss_kib=1024, checksum="x", figures={"pairs": 1e6}))
hist = [(16, 3), (24, 1), (900, 2)]
for a in LAB_CONFIGS:
    runs.append(Run(seq=len(runs) + 1, rep=0, case="id1206", workload="id1206", threads=None,
                    allocator=a, position=0, wall_s=0.1, user_s=0.1, sys_s=0.0, maxrss_kib=1024,
                    checksum="x", hist=hist))
cells = summary.summarize(runs)
case_ids = ["churn", "cs33-scaling:1", "cs33-scaling:2", "id1206"]
allocs_of = {c: sorted({r.allocator for r in runs if r.case == c}) for c in case_ids}
made, notes = plots.make_all(os.path.join(work, "plots"), cells, case_ids, allocs, allocs_of,
                             "mimalloc", studies.load(), ["churn"])
captions = dict(made)
row = lambda name: {"name": name, "runs": [{"status": "ok", "pss": 1, "load_end_s": 1.0,
                                             "samples": [[0.0, 1, 1], [2.0, 2, 2]]}]}
doc = {"rows": [row(a) for a in ("fitalloc", "fitalloc-mesh", "mimalloc", "glibc", "mesh")],
       "maxmemory": 2**20, "pause_s": 1}
redis_study.plot(doc, os.path.join(work, "redis_memory.png"))

seen = {}
for name in ("time_rss.png", "scaling.png", "redis_memory.png"):
    check(name in figures, f"{name} was not drawn")
    for label, c in colours_of(figures.get(name, matplotlib.figure.Figure())).items():
        if label in palette.COLOURS:
            seen.setdefault(label, set()).add(c)
            check(c == palette.colour(label),
                  f"{name}: {label} is {c}, the palette says {palette.colour(label)}")
check(all(len(cs) == 1 for cs in seen.values()), f"colours differ between plots: {seen}")
check({"fitalloc", "glibc", "mimalloc"} <= set(seen), f"allocators seen: {sorted(seen)}")

scaling = figures.get("scaling.png")
if scaling:
    ax = scaling.axes[0]
    check("higher is better" in ax.get_ylabel(), f"scaling's y label: {ax.get_ylabel()}")
    check(ax.get_yscale() == "log", "scaling's y axis is not logarithmic")
    check(colours_of(scaling).get("fitalloc-secure") == palette.colour("fitalloc-secure"),
          "fitalloc-secure is not drawn in scaling.png")
hist_fig = figures.get("id1206_hist.png")
if hist_fig:
    configs = studies.load()["id1206"]["configs"]
    for what, lab in configs.items():
        check(lab in captions.get("id1206_hist.png", "") and what in captions["id1206_hist.png"],
              f"id1206's caption does not name the panel {lab} ({what})")
    for ax in hist_fig.axes:
        ticks = list(ax.get_yticks()) + list(ax.get_xticks())
        check(all(float(t).is_integer() for t in ticks), f"id1206: fractional ticks {ticks}")

# The buddy system's tree (fitalloc map's FILE-structure.png): whole orders, a MiB axis.
import numpy as np
import matplotlib.pyplot as plt
from fitalloc_cli import familydraw, heapmap
from fitalloc_cli.mapdata import HeapMap

class KeepOpen:
    """pyplot, but the figure stays open for the checks."""
    def __getattr__(self, name):
        return getattr(plt, name)
    def close(self, fig):
        self.fig = fig
blocks = np.array([(0, -1, 16, 2**20 - 16), (1, -1, 3 * 2**20 + 16, 2**20 - 16)], dtype=np.int64)
hm = HeapMap("buddy", 3, blocks, np.array([(1, 4 * 2**20, 2 * 2**20, 0, 0, 0)], dtype=float))
keeper = KeepOpen()
familydraw.draw(hm, "t", os.path.join(work, "buddy-structure.png"), keeper)
ax = keeper.fig.axes[0]
orders = [t for t in ax.get_yticks() if ax.get_ylim()[0] <= t <= ax.get_ylim()[1]]
check(orders and all(float(t).is_integer() for t in orders), f"buddy orders ticked {orders}")
keeper.fig.canvas.draw()
labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
check(any(l.endswith(" MiB") for l in labels), f"buddy's addresses are not in MiB: {labels}")

check(heapmap.program_name("/x/gcc.fat.1176") == "gcc (process 1176)",
      f"a child's trace: {heapmap.program_name('/x/gcc.fat.1176')}")
check(heapmap.program_name("sort.fat") == "sort", heapmap.program_name("sort.fat"))
check(heapmap.program_name("t.trace") == "t.trace", heapmap.program_name("t.trace"))
# The compare sheet of eight configurations: its table text, seen with the sheet shrunk to a
# screen 1,600 pixels wide, is at least 8 pixels high.
from fitalloc_cli import mapdraw
from matplotlib.table import Table
mapdraw._save = lambda fig, out, dpi: figures.__setitem__("compare.png", fig)
mapdraw.side_by_side([hm] * 8, [{"config": "buddy"}] * 8, "t", os.path.join(work, "c.png"),
                     (200, 100), plt)
sheet = figures["compare.png"]
table = next(a for ax in sheet.axes for a in ax.get_children() if isinstance(a, Table))
points = min(c.get_text().get_fontsize() for c in table.get_celld().values())
pixels = points / 72 * 1600 / sheet.get_size_inches()[0]
check(pixels >= 8, f"the compare table's text is {pixels:.1f} px high at 1,600 px wide")
finish()
PY
fi

((plots)) || finish_checks "no matplotlib: the plots' checks"
finish_checks

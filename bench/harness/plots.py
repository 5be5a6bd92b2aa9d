"""The PNG plots of report.md (matplotlib, Agg backend: no display needed).

time_rss.png      wall time and peak RSS per case, allocator / reference (log scale)
scaling.png       the thread sweep (cs33-scaling): malloc/free pairs per second vs threads
id1206_hist.png   the free-block histogram per lab configuration (the ID1206 figure)
ece650_frag.png   fragmentation per policy and test beside the report and the model
Each returns a caption, or None when this run has nothing to draw for it.
"""

from __future__ import annotations

import math
import os

from .palette import colour

MARKERS = "osD^v<>ph*"
from .summary import ratio


def available() -> str | None:
    """None when matplotlib can be used, else why not."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot  # noqa: F401
    except Exception as e:  # ImportError, or a broken install
        return f"matplotlib cannot be imported ({e.__class__.__name__}: {e})"
    return None


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: str, **layout) -> None:
    """Lay out, write the PNG and free the figure (pyplot keeps every open one)."""
    fig.tight_layout(**layout)
    fig.savefig(path, dpi=100)
    _plt().close(fig)


def time_rss(cells: dict, case_ids: list[str], allocs: list[str], ref: str,
             path: str) -> str | None:
    """case_ids: the cases of the means (no sweep points)."""
    rows = [c for c in case_ids if (c, ref) in cells]
    if not rows:
        return None
    plt = _plt()
    from matplotlib.ticker import FixedLocator, FormatStrFormatter, NullFormatter

    allocs = [a for a in allocs if a != ref]  # the reference is the line at 1
    if not allocs:
        return None  # the reference alone: no ratio to draw
    fig, axes = plt.subplots(1, 2, figsize=(12, 1.8 + 0.42 * len(rows)), sharey=True)
    height = 0.8 / max(1, len(allocs))
    for ax, what, title in ((axes[0], "wall", "wall time"), (axes[1], "rss", "peak RSS")):
        for k, a in enumerate(allocs):
            ys, xs = [], []
            for i, cid in enumerate(rows):
                c, base = cells.get((cid, a)), cells.get((cid, ref))
                r = ratio(c.med(what), base.med(what)) if c and base else math.nan
                if not math.isnan(r):
                    ys.append(i + k * height - 0.4 + height / 2)
                    xs.append(r)
            # WHY bars from 1: on a log axis a ratio is a distance from 1 (better / worse).
            ax.barh(ys, [x - 1 for x in xs], left=1, height=height, label=a,
                    color=colour(a))
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(FixedLocator([0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10,
                                                 20, 50, 100]))
        ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_title(f"{title} / {ref} ({ref} = 1, lower is better)")
        ax.grid(axis="x", which="both", alpha=0.3)
    axes[0].set_yticks(range(len(rows)))
    axes[0].set_yticklabels(rows)
    axes[0].invert_yaxis()
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(allocs), fontsize="small")
    _save(fig, path, rect=(0, 0.06, 1, 1))
    return (f"Wall time and peak RSS per case, as the ratio of medians to {ref} (log scale; "
            "a bar to the left of 1 is better than the reference). A missing bar: no passing run.")


def scaling(cells: dict, sweep: list[tuple[str, int]], allocs: list[str], ops_key: str,
            path: str) -> str | None:
    if not sweep:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(9, 5.5))
    drew = False
    for k, a in enumerate(allocs):
        xs, ys, lo, hi = [], [], [], []
        for cid, n in sweep:
            c = cells.get((cid, a))
            ops = c.fig(ops_key) if c else math.nan
            if not c or not c.wall or math.isnan(ops):
                continue
            rate = ops / c.med("wall") / 1e6
            xs.append(n)
            ys.append(rate)
            lo.append(rate - ops / max(c.wall) / 1e6)
            hi.append(ops / min(c.wall) / 1e6 - rate)
        if xs:
            # WHY a marker each and fitalloc's lines on top: several allocators run at nearly
            # the same rate, and their lines would otherwise hide one another.
            ax.errorbar(xs, ys, yerr=[lo, hi], marker=MARKERS[k % len(MARKERS)], capsize=3,
                        label=a, color=colour(a), zorder=3 if a.startswith("fitalloc") else 2)
            drew = True
    if not drew:
        plt.close(fig)
        return None
    ax.set_xscale("log", base=2)
    # WHY log: the lab's configurations run tens of times slower than the rest; on a linear
    # axis the fast allocators would share one crowded band at the top and the lab one at the
    # bottom.
    ax.set_yscale("log")
    from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter

    ax.yaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
    ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xticks([n for _, n in sweep])
    ax.set_xticklabels([str(n) for _, n in sweep])
    ax.set_xlabel("threads (same total work)")
    ax.set_ylabel("million malloc/free pairs per second (wall, log scale): higher is better")
    ax.set_title(f"{sweep[0][0].split(':')[0]}: thread scaling (median, min–max)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize="small", loc="center left", bbox_to_anchor=(1.01, 0.5))
    _save(fig, path)
    return ("Thread scaling of CS33 test 1: the same number of malloc/free pairs split over "
            "1..32 threads, on this machine's cores; higher is better (log scale).")


def id1206_hist(cells: dict, case: str, configs: dict[str, str], path: str) -> str | None:
    """configs: the study's panels, description -> lab configuration."""
    hists = [(what, a, cells[(case, a)].hists[0]) for what, a in configs.items()
             if (case, a) in cells and cells[(case, a)].hists]
    if not hists:
        return None
    plt = _plt()
    from matplotlib.ticker import MaxNLocator

    fig, axes = plt.subplots(len(hists), 1, figsize=(10, 3.2 * len(hists)), squeeze=False)
    limit = 800  # the study's figure: 8-byte bins; bigger blocks go into one last bar
    for ax, (what, a, hist) in zip(axes[:, 0], hists):
        bins: dict[int, int] = {}
        big = 0
        for size, count in hist:
            if size >= limit:
                big += count
            else:
                bins[size // 8 * 8] = bins.get(size // 8 * 8, 0) + count
        ax.bar(list(bins), list(bins.values()), width=7, align="edge", color=colour(a))
        if big:
            ax.bar([limit + 8], [big], width=24, align="edge", color="black",
                   label=f"≥ {limit} B: {big}")
            ax.legend(fontsize="small")
        ax.set_title(f"{a}, {what}: free blocks by size at the end of the run")
        ax.set_xlabel("free block size (bytes, 8-byte bins)")
        ax.set_ylabel("free blocks")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(axis="y", alpha=0.3)
    _save(fig, path)
    panels = "; ".join(f"{a} ({what})" for what, a, _ in hists)
    return (f"ID1206: free-block histogram on the 64 KiB arena, one panel per configuration, "
            f"top to bottom: {panels} (the study's Figure: small blocks dominate without "
            "merging).")


def ece650_frag(cells: dict, study: dict, path: str) -> str | None:
    tests = list(study["cases"])
    policies = list(study["labs"])
    ours = {(t, p): cells[(study["cases"][t], study["labs"][p])].fig("frag_old")
            for t in tests for p in policies
            if (study["cases"][t], study["labs"][p]) in cells}
    if not any(not math.isnan(x) for x in ours.values()):
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(9, 4.5))
    width = 0.8 / (3 * len(policies))
    k = 0
    for p in policies:
        for source, color_alpha in (("ours", 1.0), ("reported", 0.55), ("model", 0.3)):
            xs, ys = [], []
            for i, t in enumerate(tests):
                if source == "ours":
                    y = ours.get((t, p), math.nan)
                elif source == "reported":
                    y = study["reported"][t][p]["frag"]
                else:
                    y = study["model"][t][p]["frag_old"]
                if y is not None and not math.isnan(y):
                    xs.append(i - 0.4 + (k + 0.5) * width)
                    ys.append(y)
            ax.bar(xs, ys, width=width, alpha=color_alpha, color=colour(study["labs"][p]),
                   label=f"{p} fit: {source}")
            k += 1
    ax.set_xticks(range(len(tests)))
    ax.set_xticklabels(tests)
    ax.set_ylabel("fragmentation (free space with headers / heap)")
    ax.set_title("ECE650 HW1: fragmentation per policy (old metric)")
    ax.legend(fontsize="small", ncol=2)
    ax.grid(axis="y", alpha=0.3)
    _save(fig, path)
    return ("ECE650 HW1: fragmentation (old metric) per policy: ours (lab), the report's, and "
            "the reference model's.")


def make_all(out_dir: str, cells: dict, case_ids: list[str], peers: list[str],
             allocs_of: dict[str, list[str]], ref: str, studies: dict,
             mean_ids: list[str] | None = None) -> tuple[list, list]:
    """Draw what this run allows (mean_ids: the cases without the sweep points; default the
    ids without ':'). Returns ([(file, caption)], [notes on what was skipped])."""
    if mean_ids is None:
        mean_ids = [c for c in case_ids if ":" not in c]
    why = available()
    if why:
        return [], [f"no plots: {why} (bash tools/bench.sh installs python3-matplotlib)"]
    os.makedirs(out_dir, exist_ok=True)
    made, notes = [], []

    def add(name: str, caption: str | None, missing: str) -> None:
        if caption:
            made.append((name, caption))
        else:
            notes.append(f"{name}: {missing}")

    add("time_rss.png", time_rss(cells, mean_ids, peers, ref, os.path.join(out_dir, "time_rss.png")),
        f"no case ran under both {ref} and a peer")
    sweep = [(cid, int(cid.split(":")[1])) for cid in case_ids if cid.startswith("cs33-scaling:")]
    sweep_allocs = sorted({a for cid, _ in sweep for a in allocs_of.get(cid, [])},
                          key=lambda a: (a.startswith("lab"), a))
    add("scaling.png", scaling(cells, sweep, sweep_allocs, "pairs",
                               os.path.join(out_dir, "scaling.png")),
        "cs33-scaling did not run")
    add("id1206_hist.png", id1206_hist(cells, "id1206", studies["id1206"]["configs"],
                                       os.path.join(out_dir, "id1206_hist.png")),
        "needs id1206 under the lab configurations (the policy lab)")
    add("ece650_frag.png", ece650_frag(cells, studies["ece650-fit"],
                                       os.path.join(out_dir, "ece650_frag.png")),
        "needs ece650-fit under lab-first/lab-best (the policy lab)")
    return made, notes

"""The fragmentation study (docs/bench.md): Johnstone and Wilson's table ("The Memory
Fragmentation Problem: Solved?", ISMM 1998) on today's programs, computed from the replay
study's rows (replay_study.py: every program traced and replayed under every policy and the
engine). Nothing is run here: the measures come from fitalloc-replay's fields (docs/replay.md).

For a row, with fragmentation = ratio - 1, in percent:
  at peak live        heap_at_peak_live / peak_live               (their measure #2)
  peak heap           peak_heap / peak_live                       (#4)
  ... without overheads, live counted in standard blocks (header and alignment set apart):
                      heap_at_peak_live_blocks / peak_live_blocks, peak_heap / peak_live_blocks
The tables: one row per policy and the engine, one column per program and their mean; a cell
is "with overheads / without". Writes <results>/fragmentation/ (fragmentation.json, .md, .png).
"""

from __future__ import annotations

import json
import os

POLICIES = ["first", "next", "best", "worst", "segregated", "tlsf", "buddy", "slab", "engine"]
# Each measure: (numerator, denominator), fields of fitalloc-replay's rows; _net: without
# header and alignment overheads.
MEASURES = {
    "at_peak_live": ("heap_at_peak_live", "peak_live"),
    "at_peak_live_net": ("heap_at_peak_live_blocks", "peak_live_blocks"),
    "peak_heap": ("peak_heap", "peak_live"),
    "peak_heap_net": ("peak_heap", "peak_live_blocks"),
}


def percent(row: dict, num: str, den: str) -> float | None:
    """(row[num] / row[den] - 1) x 100, or None when a field is missing or zero."""
    n, d = row.get(num), row.get(den)
    if not n or not d:
        return None
    return 100.0 * (n / d - 1.0)


def measures(doc: dict) -> dict:
    """{program: {config: {measure: percent, "granted_over_requested": x}}} over the
    programs the replay study replayed."""
    out = {}
    for e in doc["programs"]:
        if e["status"] != "ok":
            continue
        out[e["name"]] = {
            r["config"]: {**{key: percent(r, num, den) for key, (num, den) in MEASURES.items()},
                          "granted_over_requested": r.get("granted_over_requested")}
            for r in e["rows"]}
    return out


def mean(values: list) -> float | None:
    vs = [v for v in values if v is not None]
    return sum(vs) / len(vs) if vs else None


def _pct(v) -> str:
    return "-" if v is None else f"{v:.1f}"


def table(m: dict, with_key: str, net_key: str) -> list[str]:
    """Markdown: policies down, programs across and their mean; cells 'with / without'."""
    programs = list(m)
    out = ["| policy | " + " | ".join(programs) + " | mean |",
           "|---|" + "---:|" * (len(programs) + 1)]
    for config in POLICIES:
        if not any(config in m[p] for p in programs):
            continue
        cells, withs, nets = [], [], []
        for p in programs:
            v = m[p].get(config, {})
            withs.append(v.get(with_key))
            nets.append(v.get(net_key))
            cells.append(f"{_pct(withs[-1])} / {_pct(nets[-1])}")
        cells.append(f"**{_pct(mean(withs))} / {_pct(mean(nets))}**")
        out.append(f"| {config} | " + " | ".join(cells) + " |")
    return out


def internal_table(m: dict) -> list[str]:
    """Markdown: granted / requested bytes, policies down, programs across."""
    programs = list(m)
    out = ["| policy | " + " | ".join(programs) + " |", "|---|" + "---:|" * len(programs)]
    for config in POLICIES:
        if not any(config in m[p] for p in programs):
            continue
        cells = []
        for p in programs:
            v = m[p].get(config, {}).get("granted_over_requested")
            cells.append("-" if v is None else f"{v:.3f}")
        out.append(f"| {config} | " + " | ".join(cells) + " |")
    return out


def policy_means(m: dict, key: str) -> dict[str, float | None]:
    return {c: mean([m[p].get(c, {}).get(key) for p in m]) for c in POLICIES}


def reading(m: dict) -> list[str]:
    """What the table says about the 1998 conclusion, computed from the means."""
    if not m:
        return []
    net = policy_means(m, "peak_heap_net")
    raw = policy_means(m, "peak_heap")
    ranked = sorted((c for c in POLICIES if net[c] is not None), key=lambda c: net[c])
    lines = ["Policies by mean fragmentation (peak heap / peak live, header and alignment set "
             "apart): " + ", ".join(f"{c} {net[c]:.1f} %" for c in ranked) + "."]
    if net.get("best") is not None and net.get("first") is not None and \
            net.get("buddy") is not None:
        lines.append(f"Best fit {net['best']:.1f} % and address-ordered first fit "
                     f"{net['first']:.1f} % against the binary buddy's {net['buddy']:.1f} % "
                     f"({raw['best']:.1f}, {raw['first']:.1f} and {raw['buddy']:.1f} % with "
                     "the overheads).")
    return lines


def plot(m: dict, path: str) -> str | None:
    """Per policy, the mean fragmentation with and without overheads (bars) and each
    program's (dots), both measures; None when matplotlib is missing, else the file."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    configs = [c for c in POLICIES if any(c in m[p] for p in m)]
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.8), sharey=True)
    for ax, (with_key, net_key, title) in zip(axes, [
            ("at_peak_live", "at_peak_live_net", "heap at peak live / peak live"),
            ("peak_heap", "peak_heap_net", "peak heap / peak live")]):
        for offset, key, label, colour in ((-0.2, with_key, "with header and alignment",
                                            "tab:orange"),
                                           (0.2, net_key, "without", "tab:blue")):
            per_policy = policy_means(m, key)
            means = [per_policy[c] or 0.0 for c in configs]
            xs = [i + offset for i in range(len(configs))]
            ax.bar(xs, means, width=0.38, color=colour, alpha=0.6, label=f"mean, {label}")
            for i, c in enumerate(configs):
                vals = [m[p][c][key] for p in m if c in m[p] and m[p][c][key] is not None]
                ax.plot([xs[i]] * len(vals), vals, ".", color="black", markersize=3)
        ax.set_xticks(range(len(configs)), configs, rotation=30)
        ax.set_title(title)
        ax.set_yscale("symlog", linthresh=10)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("fragmentation, % (dots: one program each)")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"Fragmentation of {len(m)} real programs, replayed under every policy")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def section(doc: dict | None, png: str | None, command: str) -> list[str]:
    """report.md's section, from the replay study's document."""
    out = ["## Fragmentation of real programs (Johnstone and Wilson, 1998)", ""]
    if doc is None:
        return out + ["Not run: the replay study did not run.", ""]
    m = measures(doc)
    if not m:
        return out + ["No program was replayed.", ""]
    out += [f"{len(m)} programs of the replay study ({', '.join(m)}), scale "
            f"{doc['scale']:g}, each replayed under every policy and the fast engine. A cell "
            "is the fragmentation in percent, *with / without* header and alignment overheads "
            "(live memory counted as asked for, or in the standard blocks of the heap's "
            "format); the last column is the mean over the programs. docs/bench.md explains "
            f"the measures and their reading; `{command}` runs the full study.", ""]
    out += ["**Reading.** " + " ".join(reading(m)), ""]
    out += ["### Heap at the point of peak live memory / peak live (measure #2)", ""]
    out += table(m, "at_peak_live", "at_peak_live_net") + [""]
    out += ["### Peak heap / peak live (measure #4)", ""]
    out += table(m, "peak_heap", "peak_heap_net") + [""]
    out += ["### Internal fragmentation: granted / requested bytes", ""]
    out += internal_table(m) + [""]
    if png:
        out += [f"![fragmentation per policy](fragmentation/{os.path.basename(png)})", ""]
    return out


def write(out_root: str, doc: dict, draw: bool, command: str) -> list[str]:
    """fragmentation/ (json, md, png) from the replay study's document; report.md's section."""
    out_dir = os.path.join(out_root, "fragmentation")
    os.makedirs(out_dir, exist_ok=True)
    m = measures(doc)
    with open(os.path.join(out_dir, "fragmentation.json"), "w") as f:
        json.dump({"scale": doc["scale"], "measures": m}, f, indent=1)
    png = plot(m, os.path.join(out_dir, "fragmentation.png")) if draw and m else None
    lines = section(doc, png, command)
    with open(os.path.join(out_dir, "fragmentation.md"), "w") as f:
        f.write("\n".join(lines).replace("(fragmentation/", "(") + "\n")
    return lines


def terminal_lines(doc: dict) -> list[str]:
    """The measure #4 table and the reading, for the terminal."""
    m = measures(doc)
    if not m:
        return []
    return (["\nfragmentation, peak heap / peak live, % with / without header and alignment:"]
            + ["  " + line for line in table(m, "peak_heap", "peak_heap_net")]
            + ["  " + line for line in reading(m)])

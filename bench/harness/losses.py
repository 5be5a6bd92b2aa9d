"""Where a peer is ahead: the cases of this run where some peer beats fitalloc by more than the
run's noise, in wall time or in peak RSS, found from the runs themselves (report.md's section
and the lines printed at the end of the bench).

The noise of a case is the spread of its repetitions. A peer is ahead beyond it when its
slowest (largest) run is still below fitalloc's fastest (smallest): the two min-max ranges do
not overlap. A peer whose median is ahead while the ranges overlap is listed apart, as within
noise. Judging needs MIN_RUNS passing runs of each; a case with fewer is not judged.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

MIN_RUNS = 2
METRICS = (("wall", "wall time", "s", 3), ("rss", "peak RSS", "MiB", 1))
RULE = (f"A peer is ahead when every one of its runs beat every run of fitalloc: its max is "
        f"below fitalloc's min (the two min-max ranges do not overlap; at least {MIN_RUNS} "
        "passing runs of each). A peer whose median is ahead but whose range overlaps "
        "fitalloc's is within noise: its ratio is not reliable.")


@dataclass
class Loss:
    case: str
    peer: str
    metric: str  # "wall" or "rss" (Cell's fields)
    ratio: float  # fitalloc's median / the peer's: above 1, the peer is ahead
    mine: list[float]
    theirs: list[float]
    beyond_noise: bool


def is_peer(name: str) -> bool:
    """Another allocator: not one of fitalloc's modes or builds, not a lab configuration."""
    return not name.startswith(("fitalloc", "lab-"))


def find(cells: dict, case_ids: list[str], allocs_of: dict[str, list[str]],
         me: str = "fitalloc") -> list[Loss]:
    """Every (case, peer, metric) where the peer's median beats `me`'s, beyond noise or not,
    the largest ratio first."""
    out = []
    for cid in case_ids:
        mine = cells.get((cid, me))
        if mine is None:
            continue
        for peer in (a for a in allocs_of.get(cid, []) if is_peer(a)):
            theirs = cells.get((cid, peer))
            if theirs is None:
                continue
            for metric, *_ in METRICS:
                a, b = getattr(mine, metric), getattr(theirs, metric)
                if len(a) < MIN_RUNS or len(b) < MIN_RUNS:
                    continue
                ratio = statistics.median(a) / statistics.median(b)
                if ratio > 1:
                    out.append(Loss(cid, peer, metric, ratio, sorted(a), sorted(b),
                                    max(b) < min(a)))
    out.sort(key=lambda x: -x.ratio)
    return out


def _span(xs: list[float], digits: int) -> str:
    return f"{statistics.median(xs):.{digits}f} ({min(xs):.{digits}f}-{max(xs):.{digits}f})"


def _label(case: str, short: list[str]) -> str:
    return case + ("*" if case in short else "")


def section(found: list[Loss], short: list[str] | None = None) -> list[str]:
    """report.md's section "Where a peer is ahead"."""
    short = short or []
    out = ["## Where a peer is ahead", "",
           "Generated from this run: each case where a peer beats fitalloc in wall time or in "
           "peak RSS by more than the run's noise, the largest ratio first. " + RULE +
           " Ratio: fitalloc's median / the peer's (above 1: the peer is ahead). "
           "`*`: a short case (see All cases).", ""]
    for metric, title, unit, digits in METRICS:
        ahead = [x for x in found if x.metric == metric and x.beyond_noise]
        noise = [x for x in found if x.metric == metric and not x.beyond_noise]
        out += [f"### {title[0].upper()}{title[1:]}", ""]
        if ahead:
            out += [f"| case | peer | fitalloc / peer | fitalloc, {unit}: median (min-max) "
                    f"| peer, {unit}: median (min-max) |", "|---|---|---|---|---|"]
            out += [f"| {_label(x.case, short)} | {x.peer} | {x.ratio:.2f}x | "
                    f"{_span(x.mine, digits)} | {_span(x.theirs, digits)} |" for x in ahead]
        else:
            out.append(f"No peer is ahead of fitalloc in {title} beyond noise in this run.")
        out.append("")
        if noise:
            out += ["Within noise (median ahead, ranges overlap): " + ", ".join(
                f"{_label(x.case, short)} {x.peer} {x.ratio:.2f}x" for x in noise) + ".", ""]
    return out


def terminal_lines(found: list[Loss]) -> list[str]:
    """The same, short, for the end of the bench's output."""
    out = ["", "where a peer is ahead of fitalloc beyond noise (its max below fitalloc's min; "
           "fitalloc / peer, medians):"]
    for metric, title, unit, digits in METRICS:
        ahead = [x for x in found if x.metric == metric and x.beyond_noise]
        within = sum(1 for x in found if x.metric == metric and not x.beyond_noise)
        items = ", ".join(f"{x.case} {x.peer} {x.ratio:.2f}x" for x in ahead) or "none"
        out.append(f"  {title}: {items}; {within} more within noise")
    return out

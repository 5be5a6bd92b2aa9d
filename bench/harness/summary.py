"""Medians, ratios and geometric means over the runs.

Per case and allocator: the median of the passing runs (wall, CPU = user + sys, peak RSS, and
every figure the workload printed), with min and max. Ratios are median / median of the
reference allocator on the same case (mimalloc unless told otherwise; < 1 is better). Per
allocator, the geometric mean of its ratios over the cases it passed: every case weighs the
same whatever its length, and the result does not depend on the reference but for a common
factor.
A case whose reference median is under SHORT_S seconds is "short": its time is mostly process
start and exit, the same for every allocator, so its ratios say little (the tables mark it).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

from .runner import Run

SHORT_S = 0.2


@dataclass
class Cell:
    n: int = 0
    n_ok: int = 0
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    user: list[float] = field(default_factory=list)
    sys: list[float] = field(default_factory=list)
    rss: list[float] = field(default_factory=list)  # MiB
    figures: dict[str, list[float]] = field(default_factory=dict)
    hists: list[list[tuple[int, int]]] = field(default_factory=list)

    def med(self, what: str) -> float:
        xs = getattr(self, what)
        return statistics.median(xs) if xs else math.nan

    def fig(self, key: str) -> float:
        xs = self.figures.get(key)
        return statistics.median(xs) if xs else math.nan


def summarize(runs: list[Run]) -> dict[tuple[str, str], Cell]:
    cells: dict[tuple[str, str], Cell] = {}
    for r in runs:
        c = cells.setdefault((r.case, r.allocator), Cell())
        c.n += 1
        if not r.ok:
            continue
        c.n_ok += 1
        c.wall.append(r.wall_s)
        c.cpu.append(r.user_s + r.sys_s)
        c.user.append(r.user_s)
        c.sys.append(r.sys_s)
        c.rss.append(r.maxrss_kib / 1024.0)
        for k, v in r.figures.items():
            c.figures.setdefault(k, []).append(v)
        if r.hist:
            c.hists.append(r.hist)
    return cells


def check_checksums(runs: list[Run]) -> None:
    """The workloads are deterministic: every passing run of a case must print the same
    checksum ('-' opts out). The most common one wins; the others become FAILED."""
    counts: dict[str, dict[str, int]] = {}
    for r in runs:
        if r.ok and r.checksum != "-":
            counts.setdefault(r.case, {}).setdefault(r.checksum, 0)
            counts[r.case][r.checksum] += 1
    for r in runs:
        c = counts.get(r.case, {})
        if r.ok and r.checksum != "-" and len(c) > 1:
            best = max(c.items(), key=lambda kv: (kv[1], kv[0]))[0]
            if r.checksum != best:
                r.status = "FAILED"
                r.note = f"checksum {r.checksum} differs from the majority {best}"


def ratio(x: float, ref: float) -> float:
    if math.isnan(x) or math.isnan(ref) or ref <= 0:
        return math.nan
    return x / ref


def gmean(xs: list[float]) -> float:
    xs = [x for x in xs if not math.isnan(x) and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else math.nan


@dataclass
class Overall:
    allocator: str
    time: float
    rss: float
    cpu: float
    cases: int
    of: int


def each_cell(cells: dict, case_ids: list[str], allocs_of: dict[str, list[str]], ref: str):
    """(case, allocator, its cell, the reference's cell or None) for every cell that ran, case
    by case in order: the rows of the report's tables."""
    for cid in case_ids:
        refc = cells.get((cid, ref))
        for a in allocs_of.get(cid, []):
            c = cells.get((cid, a))
            if c is not None:
                yield cid, a, c, refc


def overall(cells: dict, case_ids: list[str], allocs: list[str], ref: str) -> list[Overall]:
    """Geometric mean of each allocator's ratios to `ref`, over the cases both ran."""
    out = []
    for a in allocs:
        t, r, c, ran = [], [], [], 0
        for cid in case_ids:
            mine, base = cells.get((cid, a)), cells.get((cid, ref))
            if mine is None or base is None:
                continue
            ran += 1
            t.append(ratio(mine.med("wall"), base.med("wall")))
            r.append(ratio(mine.med("rss"), base.med("rss")))
            c.append(ratio(mine.med("cpu"), base.med("cpu")))
        if ran:  # an allocator that ran only sweep points has no row
            used = sum(1 for x in t if not math.isnan(x))
            out.append(Overall(a, gmean(t), gmean(r), gmean(c), used, ran))
    return out


def short_cases(cells: dict, case_ids: list[str], ref: str) -> list[str]:
    """The cases whose median time under the reference is under SHORT_S seconds."""
    out = []
    for cid in case_ids:
        base = cells.get((cid, ref))
        if base is not None and base.wall and base.med("wall") < SHORT_S:
            out.append(cid)
    return out

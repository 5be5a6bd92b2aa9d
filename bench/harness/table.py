"""The tables printed in the terminal (and copied into report.md)."""

from __future__ import annotations

import math

from .pathologies import FACTOR, Outlier
from .summary import SHORT_S, Overall, each_cell, ratio

SHORT_MARK = "*"


def fmt(x: float, spec: str, width: int = 0) -> str:
    return f"{'-':>{width}}" if math.isnan(x) else f"{x:{width}{spec}}"


def main_table(cells: dict, case_ids: list[str], allocs_of: dict[str, list[str]],
               ref: str, short: list[str] | None = None) -> list[str]:
    """One row per case and allocator; a short case's name ends with SHORT_MARK, explained in
    a footnote."""
    short = short or []
    label = {c: c + (SHORT_MARK if c in short else "") for c in case_ids}
    wc = max([len("case")] + [len(c) for c in label.values()])
    wa = max([len("allocator")] + [len(a) for aa in allocs_of.values() for a in aa])
    head = (f"{'case':<{wc}} {'allocator':<{wa}} {'wall s (min-max)':>22} {'vs ' + ref[:8]:>11}  "
            f"{'cpu s':>6}  {'peak RSS MiB':>12} {'vs ' + ref[:8]:>11}  {'ok':>5}")
    lines = [head, "-" * len(head)]
    previous = None
    for cid, a, c, refc in each_cell(cells, case_ids, allocs_of, ref):
        if previous not in (None, cid):
            lines.append("")  # a blank line after each case
        previous = cid
        if c.wall:
            span = f"{c.med('wall'):.3f} ({min(c.wall):.3f}-{max(c.wall):.3f})"
        else:
            span = "FAILED"
        tr = ratio(c.med("wall"), refc.med("wall")) if refc else math.nan
        rr = ratio(c.med("rss"), refc.med("rss")) if refc else math.nan
        lines.append(f"{label[cid]:<{wc}} {a:<{wa}} {span:>22} {fmt(tr, '.2f', 11)}  "
                     f"{fmt(c.med('cpu'), '.2f', 6)}  {fmt(c.med('rss'), '.1f', 12)} "
                     f"{fmt(rr, '.2f', 11)}  {f'{c.n_ok}/{c.n}':>5}")
    lines.append("")
    if short:
        lines.append(f"{SHORT_MARK} short: under {SHORT_S:g} s under {ref} (median), mostly "
                     f"process start and exit, the same for every allocator: their ratios say "
                     f"little. {len(short)} of {len(case_ids)} cases: {', '.join(short)}")
    return lines


def _means(o: Overall | None) -> str:
    if o is None:
        return f"{'-':>7} {'-':>7} {'-':>7}  {'-':>5}"
    return (f"{fmt(o.time, '.3f', 7)} {fmt(o.rss, '.3f', 7)} {fmt(o.cpu, '.3f', 7)}  "
            f"{f'{o.cases}/{o.of}':>5}")


def overall_table(rows: list[Overall], ref: str, without: list[Overall] | None = None,
                  found: list[Outlier] | None = None) -> list[str]:
    """The geometric means; with `without` (the means without the cases of known
    pathologies) both side by side, then the cases left out and why, and the other
    outliers of this run (kept in both means)."""
    found = found or []
    wa = max([len("allocator")] + [len(o.allocator) for o in rows])
    lines = [f"geometric mean over cases of the ratio of medians vs {ref} (lower is better)"]
    head = f"{'allocator':<{wa}} {'time':>7} {'RSS':>7} {'cpu':>7}  cases"
    if without is None:
        lines += [head, "-" * len(head)]
        lines += [f"{o.allocator:<{wa}} {_means(o)}" for o in rows]
        lines.append("all cases: no known pathology in this run")
    else:
        part = f"{'time':>7} {'RSS':>7} {'cpu':>7}  cases"
        left = f"{'all cases':<{len(part)}}"
        head2 = f"{'':<{wa}} {left}  | without known pathologies"
        head = f"{'allocator':<{wa}} {part}  | {part}"
        lines += [head2, head, "-" * len(head)]
        by_name = {o.allocator: o for o in without}
        lines += [f"{o.allocator:<{wa}} {_means(o)}  | {_means(by_name.get(o.allocator))}"
                  for o in rows]
        known = [o for o in found if o.known]
        lines.append("without known pathologies: " + ", ".join(
            dict.fromkeys(o.case for o in known)) + " left out")
        for o in known:
            lines.append(f"  {o.case}: {o.allocator} {o.factor:.1f}x the other peers' median: "
                         f"{o.reason}")
    other: dict[str, list[Outlier]] = {}
    for o in found:
        if not o.known:
            other.setdefault(o.allocator, []).append(o)
    if other:
        lines.append(f"outliers (a peer over {FACTOR:g}x the other peers' median on a case; "
                     "not known pathologies, kept in both means):")
        lines += [f"  {a}: " + ", ".join(f"{o.case} {o.factor:.1f}x" for o in os_)
                  for a, os_ in other.items()]
    return lines

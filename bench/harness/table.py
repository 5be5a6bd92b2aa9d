"""The tables printed in the terminal (and copied into report.md)."""

from __future__ import annotations

import math

from .summary import Overall, ratio


def fmt(x: float, spec: str, width: int = 0) -> str:
    return f"{'-':>{width}}" if math.isnan(x) else f"{x:{width}{spec}}"


def main_table(cells: dict, case_ids: list[str], allocs_of: dict[str, list[str]],
               ref: str) -> list[str]:
    wc = max([len("case")] + [len(c) for c in case_ids])
    wa = max([len("allocator")] + [len(a) for aa in allocs_of.values() for a in aa])
    head = (f"{'case':<{wc}} {'allocator':<{wa}} {'wall s (min-max)':>22} {'vs ' + ref[:8]:>11}  "
            f"{'cpu s':>6}  {'peak RSS MiB':>12} {'vs ' + ref[:8]:>11}  {'ok':>5}")
    lines = [head, "-" * len(head)]
    for cid in case_ids:
        refc = cells.get((cid, ref))
        for a in allocs_of.get(cid, []):
            c = cells.get((cid, a))
            if c is None:
                continue
            if c.wall:
                span = f"{c.med('wall'):.3f} ({min(c.wall):.3f}-{max(c.wall):.3f})"
            else:
                span = "FAILED"
            tr = ratio(c.med("wall"), refc.med("wall")) if refc else math.nan
            rr = ratio(c.med("rss"), refc.med("rss")) if refc else math.nan
            lines.append(f"{cid:<{wc}} {a:<{wa}} {span:>22} {fmt(tr, '.2f', 11)}  "
                         f"{fmt(c.med('cpu'), '.2f', 6)}  {fmt(c.med('rss'), '.1f', 12)} "
                         f"{fmt(rr, '.2f', 11)}  {f'{c.n_ok}/{c.n}':>5}")
        lines.append("")
    return lines


def overall_table(rows: list[Overall], ref: str) -> list[str]:
    wa = max([len("allocator")] + [len(o.allocator) for o in rows])
    head = f"{'allocator':<{wa}} {'time':>7} {'RSS':>7} {'cpu':>7}  cases"
    lines = [f"geometric mean over cases of the ratio of medians vs {ref} (lower is better)",
             head, "-" * len(head)]
    for o in rows:
        lines.append(f"{o.allocator:<{wa}} {fmt(o.time, '.3f', 7)} {fmt(o.rss, '.3f', 7)} "
                     f"{fmt(o.cpu, '.3f', 7)}  {o.cases}/{o.of}")
    return lines

"""Known pathologies: cases where one peer is several times slower than every other allocator
for a reason of its own, and which therefore say more about that peer than about the rest.

Ratios are taken against a reference (mimalloc), so a case where the reference is pathological
makes every other allocator look several times better than it is, and a case where another
peer is pathological drags that peer's mean. The summary gives the geometric means twice: over
all cases, and without the cases listed here (for every allocator, so that all means stay over
the same cases). A case is left out only when its pathology shows in the run at hand: the peer
ran it and its median time is more than FACTOR times the median of the other peers' medians.
Only an entry of this table is ever left out, with its reason; any other case where a peer is
that far off is listed as an outlier and stays in both means (a slow fitalloc is never hidden).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

FACTOR = 3.0

# (peer, case) -> why. Checked against a run of the default bench (docs/bench.md, "Caveats").
PATHOLOGIES: dict[tuple[str, str], str] = {
    ("mimalloc", "cs33-t1"):
        "Debian's mimalloc 2.0 retires a page when its last block is freed, so a loop that "
        "mallocs and frees one block (CS33 test 1) gives up and takes back a page on every "
        "pair",
    ("jemalloc", "large"):
        "jemalloc 5.3 serves requests over 8 MiB (opt.oversize_threshold) from an arena that "
        "gives their pages back to the OS at once, so each such block is faulted in again: "
        "about 30x the page faults of the others",
    ("scudo", "large"):
        "scudo maps every block above its size classes and unmaps it at free (its cache keeps "
        "only small ones), so every page of every block is faulted in again: about 50x the "
        "page faults of fitalloc or mimalloc",
    ("mimalloc", "loop:1m"):
        "Debian's mimalloc 2.0 clears a freed 1 MiB block's memory at every malloc/free pair "
        "(callgrind: 89 % of its instructions in memset, 46,000 a pair against 600 for "
        "fitalloc)",
    ("scudo", "loop:1m"):
        "scudo maps every block above its size classes and unmaps it at free: two mmap and "
        "one munmap per malloc/free pair of a 1 MiB block, 15 us a pair (it outlasts the real "
        "size's timeout)",
    ("mimalloc", "loop:1m-2t"):
        "the same as on loop:1m: Debian's mimalloc 2.0 clears the 1 MiB block at every pair",
    ("scudo", "loop:1m-2t"):
        "the same as on loop:1m: scudo maps and unmaps every 1 MiB block",
    ("scudo", "realloc"):
        "scudo's realloc of a block above its size classes maps a new one, copies and unmaps "
        "the old one on every call, so a buffer grown in small steps faults every page again "
        "and again (it times out at the smoke size)",
}
# Pathologies too slow to run at all: the bench leaves these (peer, case) pairs out of the
# schedule and says so (a run that only times out would make the whole bench "fail").
NOT_RUN = {("scudo", "realloc"), ("scudo", "loop:1m"), ("scudo", "loop:1m-2t")}


@dataclass
class Outlier:
    case: str
    allocator: str
    factor: float  # its median time / the median of the other peers' medians
    reason: str  # the table's reason, "" when it is not a known pathology

    @property
    def known(self) -> bool:
        return bool(self.reason)


def factor(cells: dict, case: str, alloc: str, peers: list[str]) -> float:
    """The median time of `alloc` on `case` over the median of the other peers' medians."""
    mine = cells.get((case, alloc))
    others = [cells[(case, p)].med("wall") for p in peers
              if p != alloc and (case, p) in cells and cells[(case, p)].wall]
    if mine is None or not mine.wall or not others:
        return math.nan
    base = statistics.median(others)
    return mine.med("wall") / base if base > 0 else math.nan


def outliers(cells: dict, case_ids: list[str], peers: list[str],
             table: dict[tuple[str, str], str] | None = None) -> list[Outlier]:
    """Every (case, peer) of this run more than FACTOR times slower than the other peers."""
    table = PATHOLOGIES if table is None else table
    out = []
    for case in case_ids:
        for p in peers:
            f = factor(cells, case, p, peers)
            if not math.isnan(f) and f > FACTOR:
                out.append(Outlier(case, p, f, table.get((p, case), "")))
    return out


def excluded_cases(found: list[Outlier]) -> list[str]:
    """The cases the second mean leaves out: those with a known pathology in this run."""
    return list(dict.fromkeys(o.case for o in found if o.known))

"""The order of the runs: repetitions outside, then cases, then allocators, rotated.

for rep: for case: every allocator of the case once, in an order rotated by one place per
repetition (A B C, then B C A, then C A B). Slow drifts of the machine (other tenants, thermal
state, page cache) then spread over all allocators instead of landing on whichever runs last,
and no allocator always runs right after the same neighbour.
"""

from __future__ import annotations

from dataclasses import dataclass

from .allocators import Allocator
from .workloads import Case


@dataclass(frozen=True)
class Slot:
    rep: int
    case: Case
    alloc: Allocator
    position: int


def plan(cases: list[Case], allocs_of: dict[str, list[Allocator]], reps: int) -> list[Slot]:
    slots = []
    for rep in range(reps):
        for case in cases:
            allocs = allocs_of[case.id]
            if not allocs:
                continue
            k = rep % len(allocs)
            for pos, a in enumerate(allocs[k:] + allocs[:k]):
                slots.append(Slot(rep, case, a, pos))
    return slots

"""A progress bar with an estimate of the time left.

The estimate adds up, for every run still to do, the mean duration of the finished runs of the
same case and allocator (else of the same case, else of all runs): runs differ by 100x in
length, so a plain "elapsed / done" would be far off. On a terminal one line is redrawn; in a
log, every run gets a line.
"""

from __future__ import annotations

import math
import sys
import time

from .runner import Run
from .schedule import Slot


def fmt_duration(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    return f"{seconds // 60}m{seconds % 60:02d}s"


class Progress:
    WIDTH = 24

    def __init__(self, slots: list[Slot], stream=sys.stderr):
        self.slots = slots
        self.stream = stream
        self.tty = stream.isatty()
        self.t0 = time.perf_counter()
        self.done = 0
        self.by_pair: dict[tuple[str, str], list[float]] = {}
        self.by_case: dict[str, list[float]] = {}
        self.all: list[float] = []

    def _guess(self, slot: Slot) -> float:
        for xs in (self.by_pair.get((slot.case.id, slot.alloc.name)),
                   self.by_case.get(slot.case.id), self.all):
            if xs:
                return sum(xs) / len(xs)
        return 1.0

    def left(self) -> float:
        return sum(self._guess(s) for s in self.slots[self.done:])

    def update(self, run: Run) -> None:
        d = 0.0 if math.isnan(run.wall_s) else run.wall_s
        self.by_pair.setdefault((run.case, run.allocator), []).append(d)
        self.by_case.setdefault(run.case, []).append(d)
        self.all.append(d)
        self.done += 1
        total = len(self.slots)
        elapsed = time.perf_counter() - self.t0
        filled = self.WIDTH * self.done // total
        bar = "#" * filled + "-" * (self.WIDTH - filled)
        msg = (f"[{bar}] {self.done}/{total} {100 * self.done // total:3d}%  "
               f"elapsed {fmt_duration(elapsed)}, left ~{fmt_duration(self.left())}  "
               f"rep {run.rep + 1} {run.case} {run.allocator} {run.wall_s:.2f}s")
        if not run.ok:
            msg += f"  FAILED: {run.note}"
        if self.tty and run.ok:
            print("\r" + msg[:200] + "\033[K", end="", file=self.stream, flush=True)
        else:
            print(("\r\033[K" if self.tty else "") + msg, file=self.stream, flush=True)

    def finish(self) -> None:
        if self.tty:
            print(file=self.stream)

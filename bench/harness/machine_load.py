"""How busy the machine was during the timed runs: the load average at the start and at the
end, and the CPU time other processes took meanwhile, for report.md's header.

Other processes' CPU time = the busy time of all CPUs in /proc/stat (user, nice, system, irq,
softirq) over the runs, minus the bench's own (its process and the workloads it waited for,
getrusage). A busy machine stretches wall times by waiting for a core and widens the spread of
the repetitions: the report then warns that ratios within noise are not reliable.
"""

from __future__ import annotations

import os
import resource
import time

# The warning's rule: others took more than BUSY_SHARE of the machine's CPU time over the runs,
# or the 1-minute load average exceeded the number of cores at the start. The load at the end
# is reported but is no sign of others: it counts the bench's own threads (its last cases run 8).
BUSY_SHARE = 0.25


def _busy_seconds() -> float | None:
    """CPU time all CPUs spent busy since boot, or None when /proc/stat cannot be read."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu" or len(fields) < 8:
        return None
    user, nice, system, _idle, _iowait, irq, softirq = (int(x) for x in fields[1:8])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def _own_seconds() -> float:
    """CPU time of this process and of the children it waited for."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        r = resource.getrusage(who)
        total += r.ru_utime + r.ru_stime
    return total


def _load1() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def start() -> dict:
    """A snapshot before the runs; give it to finish() after them."""
    return {"load": _load1(), "busy": _busy_seconds(), "own": _own_seconds(),
            "wall": time.monotonic()}


def finish(before: dict) -> dict:
    """The record of the runs: load averages, elapsed seconds, CPU seconds of the bench and of
    the others (None when unknown), the machine's cores and whether it was busy."""
    busy = _busy_seconds()
    own = _own_seconds() - before["own"]
    wall = time.monotonic() - before["wall"]
    others = None
    if busy is not None and before["busy"] is not None:
        others = max(0.0, busy - before["busy"] - own)
    return describe(before["load"], _load1(), wall, own, others, os.cpu_count() or 1)


def describe(load_start: float | None, load_end: float | None, wall_s: float, own_cpu_s: float,
             others_cpu_s: float | None, cores: int) -> dict:
    share = others_cpu_s / (wall_s * cores) if others_cpu_s is not None and wall_s > 0 else None
    busy = (share is not None and share > BUSY_SHARE) or (load_start or 0) > cores
    return {"load_start": load_start, "load_end": load_end, "wall_s": wall_s,
            "own_cpu_s": own_cpu_s, "others_cpu_s": others_cpu_s, "others_share": share,
            "cores": cores, "busy": busy}


def _num(x: float | None, spec: str) -> str:
    return "unknown" if x is None else f"{x:{spec}}"


def _sentences(load: dict) -> tuple[str, str | None]:
    """(what the load was, the warning or None)."""
    share = load["others_share"]
    what = (f"machine load: load average (1 min) {_num(load['load_start'], '.2f')} at the "
            f"start of the timed runs, {_num(load['load_end'], '.2f')} at the end, on "
            f"{load['cores']} cores; other processes took {_num(load['others_cpu_s'], '.0f')} "
            "s of CPU time during the runs ("
            + ("unknown" if share is None else f"{share:.0%}")
            + f" of the machine's {load['wall_s'] * load['cores']:.0f} s), the bench "
            f"{load['own_cpu_s']:.0f} s")
    if not load["busy"]:
        return what, None
    return what, (f"WARNING: the machine was busy (rule: other processes took more than "
                  f"{BUSY_SHARE:.0%} of its CPU time, or the load average exceeded its cores at the start): "
                  "wall times include waits for a core and the repetitions spread more. A "
                  "ratio is reliable only where the min-max ranges of the two allocators do "
                  "not overlap (\"Where a peer is ahead\"); CPU time (user + sys) is less "
                  "affected than wall time.")


def header_lines(load: dict) -> list[str]:
    """report.md's header lines on the machine's load, with the warning when it was busy."""
    what, warning = _sentences(load)
    return [f"- {what}"] + ([f"- **{warning}**"] if warning else [])


def terminal_lines(load: dict) -> list[str]:
    """The same for the end of the bench's output."""
    what, warning = _sentences(load)
    return [what] + ([warning] if warning else [])

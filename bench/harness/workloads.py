"""The workloads: what each one runs, at which sizes, and under which lab configurations.

A Workload is one entry of the suite (a program in bench/workloads/ plus fixed arguments). A
workload with a thread sweep expands into one Case per thread count: the points of one curve,
which --threads can change and the geometric means leave out. A fixed thread count that is a
case of its own (rptest:8, larson:8) is instead an entry with "--threads N" in its arguments,
named "<name>:<N>". Programs in bench/workloads/*.c that no entry names join the stress shapes
automatically, so dropping a new file there is enough to add a workload.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .paths import WORKLOAD_DIR

SIZES = ("smoke", "real", "full")
PROBES = {"pair"}  # built but not timed: bench/callgrind_pair.sh uses it

# Lab configurations (see allocators.LAB_CONFIGS) that make sense for a workload.
BEST_LOCKS = ("lab-best", "lab-best-thread", "lab-best-arenas")
FITS = ("lab-first", "lab-best", "lab-segregated")
FITS_AND_LISTS = FITS + ("lab-first-list", "lab-best-list")
FOUR_FITS = ("lab-first", "lab-next", "lab-best", "lab-worst")
ARENA_64K = ("lab-next64k-nomerge", "lab-seg64k", "lab-seg64k-nomerge")
ISSUE12 = "issue12"  # the group of the shapes issue 12 asked for


@dataclass(frozen=True)
class Workload:
    name: str
    program: str
    args: tuple[str, ...] = ()
    kind: str = "stress"  # stress | classic | test (test: hidden, for the harness's own test)
    labs: tuple[str, ...] = ()
    sweep: tuple[int, ...] = ()  # --threads values; one case each
    study: str = ""
    summary: str = ""
    group: str = ""  # a group name that selects it (besides its kind)
    default: bool = True  # in the default suite (False: only when named, or its group is)


@dataclass(frozen=True)
class Case:
    id: str  # the workload's name, or "<name>:<threads>" for a point of a sweep
    workload: Workload
    threads: int | None = None

    @property
    def sweep_point(self) -> bool:
        """A point of a thread sweep (a curve), not a case of the means."""
        return self.threads is not None

    @property
    def argv_tail(self) -> list[str]:
        tail = list(self.workload.args)
        if self.threads is not None:
            tail += ["--threads", str(self.threads)]
        return tail


REGISTRY = [
    Workload("churn", "churn", summary="single thread, random sizes 16..1024 B, random replace"),
    Workload("xthread", "xthread", summary="2 producer/consumer pairs, every free remote"),
    Workload("threads", "threads", summary="8 threads, private churn, 1/32 handed off, rounds"),
    Workload("larson", "larson", summary="server churn: thread chains hand their blocks on"),
    Workload("realloc", "realloc", summary="buffers grown by realloc up to 1..8 MiB"),
    Workload("large", "large", summary="64 KiB..16 MiB blocks, random replace"),
    Workload("tree", "tree", summary="binary trees: many short-lived small nodes"),
    Workload("cache-thrash", "cache-thrash", summary="active false sharing (Hoard)"),
    Workload("cache-scratch", "cache-scratch", summary="passive false sharing (Hoard)"),
    Workload("short-threads", "short-threads", summary="2,000 short-lived threads"),
    # Issue 12's shapes: where a peer was measured faster than fitalloc (docs/bench.md). The
    # default suite runs four of them, to stay within its time; all fifteen run with -w issue12.
    Workload("churn-wide", "churn-wide", group=ISSUE12,
             summary="single thread, 8 B..256 KiB log-uniform, 4,096 slots, a word per page"),
    Workload("buffers", "buffers", group=ISSUE12,
             summary="20 calloc'd buffers of 5..25 MiB, random replace"),
    Workload("buffers:malloc", "buffers", ("--alloc", "malloc"), group=ISSUE12, default=False,
             summary="the same buffers from malloc, written without the zero check"),
    Workload("buffers:sparse", "buffers", ("--touch", "sparse"), group=ISSUE12, default=False,
             summary="the same calloc'd buffers, one page in 64 used"),
    Workload("rptest:8", "rptest", ("--threads", "8"), group=ISSUE12,
             summary="8 B..16 KiB, 3 in 4 blocks freed by another thread; 8 threads on 2 cores"),
    Workload("scratch-1", "cache-scratch",
             ("--threads", "1", "--object-size", "1", "--repeat", "40000"), group=ISSUE12,
             summary="cache-scratch, 1 thread: 1-byte objects, each written 40,000 times"),
    Workload("rptest:2", "rptest", ("--threads", "2"), group=ISSUE12, default=False,
             summary="the same as rptest:8 with 2 threads"),
    Workload("xthread:2", "xthread", ("--threads", "2"), group=ISSUE12, default=False,
             summary="xthread with 1 producer/consumer pair"),
    Workload("xthread:8", "xthread", ("--threads", "8"), group=ISSUE12, default=False,
             summary="xthread with 4 pairs (8 threads on 2 cores)"),
    Workload("larson:8", "larson", ("--threads", "8"), group=ISSUE12, default=False,
             summary="larson with 8 chains (8 threads on 2 cores)"),
    Workload("loop", "loop", group=ISSUE12, default=False,
             summary="malloc, write, free of one 16-byte block, 30M times"),
    Workload("loop:4k", "loop", ("--block", "4096"), group=ISSUE12, default=False,
             summary="the same with a 4 KiB block"),
    Workload("loop:1m", "loop", ("--block", "1048576"), group=ISSUE12, default=False,
             summary="the same with a 1 MiB block (a large block), 3M times"),
    Workload("loop:1m-2t", "loop", ("--block", "1048576", "--threads", "2"), group=ISSUE12,
             default=False, summary="the same from 2 threads at once, 1.5M times each"),
    Workload("smt", "smt", group=ISSUE12, default=False,
             summary="z3 on a generated integer problem: 600 push/check-sat/pop scopes"),
    Workload("ece650-ts", "ece650-ts", ("--test", "measurement"), "classic", BEST_LOCKS,
             study="ece650-ts", summary="ECE650 HW2: thread_test_measurement"),
    Workload("ece650-ts-tests", "ece650-ts", ("--test", "tests"), "classic", BEST_LOCKS,
             summary="ECE650 HW2: the three thread tests (overlap checks)"),
    Workload("ece650-fit-equal", "ece650-fit", ("--test", "equal"), "classic", FITS,
             study="ece650-fit", summary="ECE650 HW1: equal_size_allocs"),
    Workload("ece650-fit-small", "ece650-fit", ("--test", "small"), "classic", FITS_AND_LISTS,
             study="ece650-fit", summary="ECE650 HW1: small_range_rand_allocs"),
    Workload("ece650-fit-large", "ece650-fit", ("--test", "large"), "classic", FITS,
             study="ece650-fit", summary="ECE650 HW1: large_range_rand_allocs"),
    Workload("cse3320", "cse3320", ("--variant", "portable"), "classic", FOUR_FITS,
             study="cse3320", summary="CSE3320 benchmark, first block 50 MB (portable)"),
    Workload("cse3320-faithful", "cse3320", ("--variant", "faithful"), "classic", FOUR_FITS,
             study="cse3320", summary="CSE3320 benchmark, first block 5 GB (as reported)"),
    Workload("id1206", "id1206", (), "classic", ARENA_64K, study="id1206",
             summary="ID1206 palloc/pree benchmark, buffer 300"),
    Workload("cs33-t1", "cs33", ("--test", "1"), "classic", BEST_LOCKS, study="cs33",
             summary="CS33 test 1: 32 threads malloc/free"),
    Workload("cs33-t2", "cs33", ("--test", "2"), "classic", BEST_LOCKS, study="cs33",
             summary="CS33 test 2: 16 producer/consumer pairs"),
    Workload("cs33-scaling", "cs33", ("--test", "1", "--exit", "join"), "classic", BEST_LOCKS,
             sweep=(1, 2, 4, 8, 16, 32), study="cs33",
             summary="CS33 test 1, same work over 1..32 threads"),
    Workload("selftest", "selftest", ("--mode", "ok"), "test", summary="harness test: passes"),
    Workload("selftest-corrupt", "selftest", ("--mode", "corrupt"), "test",
             summary="harness test: reports corruption, exits 1"),
    Workload("selftest-crash", "selftest", ("--mode", "crash"), "test",
             summary="harness test: dies of SIGABRT"),
    Workload("selftest-hang", "selftest", ("--mode", "hang"), "test",
             summary="harness test: sleeps until the timeout kills it"),
]


def programs() -> list[str]:
    """Every program in bench/workloads/ (file name without .c)."""
    return sorted(f[:-2] for f in os.listdir(WORKLOAD_DIR) if f.endswith(".c"))


def all_workloads() -> list[Workload]:
    """The registry, plus a stress entry for every program it does not name."""
    named = {w.program for w in REGISTRY}
    extra = [Workload(p, p, summary="(no description: not in harness/workloads.py)")
             for p in programs() if p not in named and p not in PROBES]
    stress = [w for w in REGISTRY if w.kind == "stress"]
    return stress + extra + [w for w in REGISTRY if w.kind != "stress"]


def groups(workloads: list[Workload]) -> dict[str, list[Workload]]:
    """Names that select several workloads: the kinds, the entries' own groups, and programs
    with several entries (unless an entry has the program's name)."""
    out: dict[str, list[Workload]] = {
        "stress": [w for w in workloads if w.kind == "stress"],
        "classic": [w for w in workloads if w.kind == "classic"],
    }
    for w in workloads:
        if w.group:
            out.setdefault(w.group, []).append(w)
    by_program: dict[str, list[Workload]] = {}
    for w in workloads:
        if w.kind != "test":
            by_program.setdefault(w.program, []).append(w)
    names = {w.name for w in workloads}
    for program, ws in by_program.items():
        if len(ws) > 1 and program not in names:
            out[program] = ws
    return out


def select(text: str | None, workloads: list[Workload]) -> list[Workload]:
    """The workloads named by a comma list (names or group names); None: the default suite.
    Raises ValueError listing the valid names."""
    if text is None:
        return [w for w in workloads if w.kind != "test" and w.default]
    by_name = {w.name: w for w in workloads}
    grp = groups(workloads)
    chosen: list[Workload] = []
    for token in (t.strip() for t in text.split(",")):
        if not token:
            continue
        if token in by_name:
            picked = [by_name[token]]
        elif token in grp:
            picked = grp[token]
        else:
            hint = " ('pair' is the instruction-count probe: use callgrind_pair.sh)" \
                if token in PROBES else ""
            raise ValueError(f"unknown workload '{token}'{hint}; valid: {valid_names(workloads)}")
        chosen += [w for w in picked if w not in chosen]
    if not chosen:
        raise ValueError(f"empty workload list; valid: {valid_names(workloads)}")
    return chosen


def valid_names(workloads: list[Workload]) -> str:
    public = [w.name for w in workloads if w.kind != "test"]
    hidden = [w.name for w in workloads if w.kind == "test"]
    return (", ".join(public) + "; groups: " + ", ".join(groups(workloads))
            + "; test only: " + ", ".join(hidden))


def cases(selected: list[Workload], sweep: tuple[int, ...] | None = None) -> list[Case]:
    """Expand thread sweeps (sweep overrides every workload's own list)."""
    out = []
    for w in selected:
        points = (sweep or w.sweep) if w.sweep else ()
        if points:
            out += [Case(f"{w.name}:{n}", w, n) for n in points]
        else:
            out.append(Case(w.name, w))
    return out

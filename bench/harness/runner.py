"""One run: a workload process under one allocator, its rusage, and what it printed.

The workload is started by support/runrss, which sets LD_PRELOAD for the workload only and
reports the workload's own rusage (wait4). Its stdout is parsed for
    ok <program> <checksum>      the run checked its data and finished ('-': do not compare)
    <key> <number>               a figure (keys: lower case, digits, '_' and '.')
    hist <size> <count>          a free-block histogram row (the lab's)
A run is FAILED when it exits non-zero, is killed (signal or timeout), makes ld.so ignore the
preload, or prints no ok line.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field

from .allocators import Allocator, run_env
from .workloads import Case

KEY_RE = re.compile(r"^[a-z][a-z0-9_.]*$")


@dataclass
class Run:
    seq: int  # place in the whole run order, from 1
    rep: int  # from 0
    case: str
    workload: str
    threads: int | None
    allocator: str
    position: int  # place of this allocator in this repetition's rotated order
    wall_s: float = math.nan
    user_s: float = math.nan
    sys_s: float = math.nan
    maxrss_kib: int = 0
    exit_code: int = 0
    checksum: str = ""
    status: str = "ok"  # ok | FAILED
    note: str = ""
    figures: dict[str, float] = field(default_factory=dict)
    hist: list[tuple[int, int]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def parse_output(text: str, program: str, run: Run) -> None:
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "ok" and parts[1] == program:
            run.checksum = parts[2]
        elif len(parts) == 3 and parts[0] == "hist":
            try:
                run.hist.append((int(parts[1]), int(parts[2])))
            except ValueError:
                pass
        elif len(parts) == 2 and KEY_RE.match(parts[0]):
            try:
                run.figures[parts[0]] = float(parts[1])
            except ValueError:
                pass


def run_one(build_dir: str, tmp: str, case: Case, size: str, alloc: Allocator,
            timeout: float, run: Run) -> None:
    out_path, err_path, stat_path = (os.path.join(tmp, n) for n in ("out", "err", "stat"))
    if os.path.exists(stat_path):
        os.unlink(stat_path)
    argv = [os.path.join(build_dir, "runrss"), stat_path, alloc.preload,
            os.path.join(build_dir, case.workload.program), "--size", size, *case.argv_tail]
    # The allocator's own files ({tmp} in its variables: a trace) go to a directory that is
    # new for each run and removed after it, out of the time measured.
    scratch = os.path.join(tmp, "scratch")
    shutil.rmtree(scratch, ignore_errors=True)
    os.mkdir(scratch)
    timed_out = threading.Event()
    with open(out_path, "wb") as fo, open(err_path, "wb") as fe:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=fo, stderr=fe,
                                env=run_env(alloc, scratch), start_new_session=True)

        def kill() -> None:
            timed_out.set()
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            _, status, _ = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        run.wall_s = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
    run.exit_code = proc.returncode
    shutil.rmtree(scratch, ignore_errors=True)

    stat: dict[str, str] = {}
    try:
        with open(stat_path) as f:
            words = f.read().split()
        stat = dict(zip(words[0::2], words[1::2]))
        run.user_s = float(stat["utime"])
        run.sys_s = float(stat["stime"])
        run.maxrss_kib = int(stat["maxrss"])
    except (OSError, KeyError, ValueError):
        pass
    with open(out_path, errors="replace") as f:
        parse_output(f.read(), case.workload.program, run)
    with open(err_path, errors="replace") as f:
        err = f.read()

    problems = []
    if timed_out.is_set():
        problems.append(f"timeout after {timeout:g}s")
    elif stat.get("signal", "0") != "0":
        sig = int(stat["signal"])
        try:
            signame = signal.Signals(sig).name
        except ValueError:
            signame = f"signal {sig}"
        problems.append(f"killed by {signame}")
    elif run.exit_code != 0:
        problems.append(f"exit {run.exit_code}")
    if "cannot be preloaded" in err:
        problems.append("preload ignored by ld.so")
    if not run.checksum and not problems:
        problems.append("no 'ok' line")
    if problems:
        first_err = next((line.strip() for line in err.splitlines() if line.strip()), "")
        run.status = "FAILED"
        run.note = "; ".join(problems) + (f": {first_err[:160]}" if first_err else "")

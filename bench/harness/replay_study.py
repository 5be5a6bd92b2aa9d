"""The study "real programs, replayed" (docs/bench.md): after the timed runs, each program of
study_programs.py is traced (`fitalloc run --trace`; a server while its load runs), replayed
under every placement policy of the lab and through the fast engine (`fitalloc-replay --engine
--json`), and, for MAP_PROGRAMS, drawn side by side (`fitalloc compare`). Only these tools read
the traces: the study never opens one. frag_study.py makes the fragmentation table of its rows.

Writes into <results>/replay/:
  study.json               what ran, how long each step took, every program's rows
  <program>/replay.json    fitalloc-replay's JSON: one row per policy and the engine
  <program>/maps/          what `fitalloc compare` wrote: compare.png, <policy>.png, replay.md
  <program>/input/         the generated input; program.out: what the program printed
The traces themselves (tens of MB each) are removed. The report's section: study_report.py.

A program that is not installed, or tools that are missing, give a note; a step that fails (the
program exits non-zero under fitalloc, a tool fails) is a failure of the study.
"""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

from .paths import ROOT_DIR
from .study_programs import PROGRAMS, Program

# Scale of the inputs per bench size: smoke (the default run) keeps each trace around a
# million operations or less; real and full only make them longer; the fragmentation study
# (--study fragmentation) runs them longer still, to a steady heap.
SCALES = {"smoke": 1.0, "real": 3.0, "full": 3.0, "fragmentation": 4.0}
# A step that takes longer than this has hung (the default size takes seconds).
STEP_TIMEOUT_S = 600.0
SYSTEM_PYTHON = "/usr/bin/python3"
# WHY not every program: drawing a program's maps (fitalloc compare: a replay per policy and
# eight images) takes several times as long as tracing and replaying it.
MAP_PROGRAMS = [p.name for p in PROGRAMS if p.maps_by_default]


@dataclass
class Tools:
    """How the study runs the fitalloc command and fitalloc-replay, and which library."""

    command: list[str]  # argv prefix of the `fitalloc` command
    replay: str
    library: str
    env: dict[str, str] = field(default_factory=dict)


def _executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def locate(library: str, preload: str, replay: str | None,
           log) -> tuple[Tools | None, str | None]:
    """Find the tools beside `library` (where CMake built it), to run with `preload` (the
    bench's snapshot of it), or say why the study cannot run.
    WHY the build: tools/bench.sh builds only the library, and a fitalloc-replay left from an
    older build may not read the traces the new library writes; building it where CMake left
    the library keeps the two in step (and is nothing when they are)."""
    if not os.path.isfile(preload):
        return None, f"replay study skipped: no library at {preload}"
    lib_dir = os.path.dirname(os.path.abspath(library))
    if replay is None:
        if os.path.isfile(os.path.join(lib_dir, "CMakeCache.txt")) and shutil.which("cmake"):
            log(f"replay study: building fitalloc-replay in {lib_dir}")
            res = subprocess.run(["cmake", "--build", lib_dir, "--target", "fitalloc-replay"],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                 errors="replace")
            if res.returncode != 0:
                tail = " | ".join(res.stdout.strip().splitlines()[-3:])
                return None, f"replay study skipped: building fitalloc-replay failed: {tail}"
        replay = os.path.join(lib_dir, "fitalloc-replay")
        if not _executable(replay):
            replay = shutil.which("fitalloc-replay") or replay
    if not _executable(replay):
        return None, (f"replay study skipped: fitalloc-replay not found ({replay}); build it "
                      "(ninja fitalloc-replay) or give --replay PATH")
    env = {"FITALLOC_REPLAY": os.path.abspath(replay)}
    launcher = os.path.join(lib_dir, "fitalloc")
    if os.path.isfile(launcher):
        command = [sys.executable, launcher]  # the bench's Python: it has matplotlib
    else:  # no build tree around the library: the package from the source tree
        command = [sys.executable, "-m", "fitalloc_cli"]
        env["PYTHONPATH"] = os.path.join(ROOT_DIR, "python")
    return Tools(command, os.path.abspath(replay), os.path.abspath(preload), env), None


def has_matplotlib() -> bool:
    """What `fitalloc compare` will find: matplotlib in this Python, or in the system's one
    (the command runs itself again there when its own Python lacks it)."""
    if importlib.util.find_spec("matplotlib") is not None:
        return True
    if not _executable(SYSTEM_PYTHON):
        return False
    return subprocess.run([SYSTEM_PYTHON, "-c", "import matplotlib, numpy"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


def clean_env(tools: Tools) -> dict[str, str]:
    """The caller's environment without anything that would change the runs: no preload, no
    FITALLOC_* (the bench's runs get the same), no PYTHON* (a PYTHONPATH or PYTHONMALLOC of the
    shell would change the python3 program); the C locale; the tools' own settings."""
    env = {k: v for k, v in os.environ.items()
           if k != "LD_PRELOAD" and not k.startswith(("FITALLOC_", "PYTHON"))}
    env["LC_ALL"] = "C"
    env["FITALLOC_LIB"] = tools.library
    env.update(tools.env)
    return env


@dataclass
class Step:
    rc: int
    out: str
    err: str
    seconds: float
    timed_out: bool = False

    def why(self, what: str) -> str:
        """What went wrong, with the last line the command wrote on stderr."""
        if self.timed_out:
            return f"{what} timed out after {STEP_TIMEOUT_S:g} s"
        if self.rc < 0:
            try:
                name = signal.Signals(-self.rc).name
            except ValueError:
                name = f"signal {-self.rc}"
            reason = f"killed by {name}"
        else:
            reason = f"exit {self.rc}"
        last = next((line for line in reversed(self.err.strip().splitlines()) if line.strip()),
                    "")
        return f"{what}: {reason}" + (f": {last.strip()}" if last else "")


def run_step(cmd: list[str], env: dict[str, str], cwd: str, stdin: str | None = None) -> Step:
    """Run one command to its end, or kill its whole process group after STEP_TIMEOUT_S
    (gcc's driver leaves cc1 and as behind otherwise)."""
    t0 = time.perf_counter()
    with open(stdin or os.devnull, "rb") as inp:
        try:
            proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=inp, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, start_new_session=True)
        except OSError as e:
            return Step(127, "", f"cannot run {cmd[0]}: {e.strerror}", 0.0)
        timed_out = False
        try:
            out, err = proc.communicate(timeout=STEP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            timed_out = True
    return Step(proc.returncode, out.decode(errors="replace"), err.decode(errors="replace"),
                time.perf_counter() - t0, timed_out)


def run_with_load(cmd: list[str], load: list[str], env: dict[str, str], cwd: str) -> Step:
    """Run a server (cmd) while its load runs to its end, then wait for the server, which the
    load stops; the server's Step, or the load's when the load failed."""
    t0 = time.perf_counter()
    try:
        server = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  start_new_session=True)
    except OSError as e:
        return Step(127, "", f"cannot run {cmd[0]}: {e.strerror}", 0.0)
    step = run_step(load, env, cwd)
    timed_out = False
    try:
        out, err = server.communicate(timeout=30 if step.rc == 0 else 1)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        out, err = server.communicate()
        timed_out = step.rc == 0
    if step.rc != 0:
        step.err = f"the load failed ({step.why(load[0])})"
        return step
    return Step(server.returncode, out.decode(errors="replace"), err.decode(errors="replace"),
                time.perf_counter() - t0, timed_out)


def find_program(program: Program) -> str | None:
    if os.path.isabs(program.executable):
        return program.executable if _executable(program.executable) else None
    return shutil.which(program.executable)


def missing_tool(program: Program) -> tuple[str, str] | None:
    """The first program it needs that is not installed, with its Debian package; or None."""
    if find_program(program) is None:
        return program.executable, program.package
    return next(((name, pkg) for name, pkg in program.helpers if shutil.which(name) is None),
                None)


def biggest_trace(path: str) -> tuple[str | None, int]:
    """The trace of the process that made the most calls (the largest file: records have one
    size), among path and path.PID of the processes the program started; and their number."""
    files = [f for f in [path, *glob.glob(glob.escape(path) + ".*")] if os.path.isfile(f)]
    if not files:
        return None, 0
    return max(files, key=os.path.getsize), len(files)


def study_one(program: Program, tools: Tools, out_dir: str, work: str, scale: float,
              maps: str | None, log) -> dict:
    """Trace, replay and draw one program; its entry of study.json."""
    entry = {"name": program.name, "what": program.what, "status": "ok", "note": "",
             "command": "", "processes": 0, "records": None, "threads": None, "rows": [],
             "maps": None, "trace_s": None, "replay_s": None, "compare_s": None}
    missing = missing_tool(program)
    if missing:
        name, pkg = missing
        entry["status"] = "missing"
        entry["note"] = f"{name} not found (Debian: apt-get install {pkg})"
        log(f"replay study: {program.name} not studied: {entry['note']}")
        return entry
    dest = os.path.join(out_dir, program.name)
    os.makedirs(os.path.join(dest, "input"), exist_ok=True)
    os.makedirs(work, exist_ok=True)
    inv = program.prepare(work, scale)
    for f in inv.inputs:
        shutil.copy2(os.path.join(work, f), os.path.join(dest, "input"))
    entry["command"] = (shlex.join(inv.argv) + (f" < {inv.stdin}" if inv.stdin else "")
                        + (f" (load, untraced: {shlex.join(inv.load)})" if inv.load else ""))
    env = clean_env(tools)
    env.update(inv.env)

    def fail(note: str) -> dict:
        entry["status"] = "FAILED"
        entry["note"] = note
        log(f"replay study: {program.name}: FAILED: {note}")
        return entry

    trace = os.path.join(work, f"{program.name}.fat")  # the maps' titles name it
    log(f"replay study: {program.name}: tracing {entry['command']}")
    traced = [*tools.command, "run", "--trace", trace, "--", *inv.argv]
    if inv.load:
        step = run_with_load(traced, inv.load, env, work)
    else:
        step = run_step(traced, env, work, inv.stdin and os.path.join(work, inv.stdin))
    entry["trace_s"] = round(step.seconds, 3)
    with open(os.path.join(dest, "program.out"), "w") as f:
        f.write(step.out)
    if step.rc != 0:
        return fail(step.why(f"{program.executable} under fitalloc run --trace"))
    chosen, entry["processes"] = biggest_trace(trace)
    if chosen is None:
        return fail(f"no trace written at {trace}")

    log(f"replay study: {program.name}: replaying every policy and the engine")
    step = run_step([tools.replay, chosen, "--engine", "--json"], env, work)
    entry["replay_s"] = round(step.seconds, 3)
    if step.rc != 0:
        return fail(step.why("fitalloc-replay --engine --json"))
    try:
        doc = json.loads(step.out)
        entry["rows"] = list(doc["rows"])
        entry["records"], entry["threads"] = doc.get("records"), doc.get("threads")
    except (ValueError, KeyError, TypeError) as e:
        return fail(f"fitalloc-replay printed no rows ({e})")
    with open(os.path.join(dest, "replay.json"), "w") as f:
        f.write(step.out)

    if maps is not None:
        entry["note"] = maps
    elif not program.maps_by_default:
        entry["note"] = ("maps not drawn (drawn for " + ", ".join(MAP_PROGRAMS)
                         + " only, to keep the study short)")
    else:
        log(f"replay study: {program.name}: drawing the maps (fitalloc compare)")
        step = run_step([*tools.command, "compare", chosen, "-o", os.path.join(dest, "maps")],
                        env, work)
        entry["compare_s"] = round(step.seconds, 3)
        if step.rc != 0:
            return fail(step.why("fitalloc compare"))
        entry["maps"] = "maps"
    return entry


def run(out_root: str, tools: Tools, programs: list[Program], scale: float,
        draw: bool, log) -> dict:
    """The whole study into out_root/replay/; returns (and writes) study.json's document."""
    out_dir = os.path.join(out_root, "replay")
    os.makedirs(out_dir, exist_ok=True)
    maps = None
    if not draw:
        maps = "maps not drawn (--no-plots)"
    elif not has_matplotlib():
        maps = "maps not drawn: matplotlib is not installed (apt-get install python3-matplotlib)"
    t0 = time.perf_counter()
    entries = []
    with tempfile.TemporaryDirectory(prefix="fitalloc-study-") as tmp:
        for p in programs:
            work = os.path.join(tmp, p.name)
            entries.append(study_one(p, tools, out_dir, work, scale, maps, log))
            shutil.rmtree(work, ignore_errors=True)  # its traces: tens of MB
    doc = {"scale": scale, "seconds": round(time.perf_counter() - t0, 1),
           "library": tools.library, "replay": tools.replay, "programs": entries}
    with open(os.path.join(out_dir, "study.json"), "w") as f:
        json.dump(doc, f, indent=1)
    log(f"replay study: {len(entries)} programs in {doc['seconds']:.1f} s")
    return doc


def failures(doc: dict | None) -> list[str]:
    """One line per program whose study FAILED."""
    if not doc:
        return []
    return [f"{e['name']}: {e['note']}" for e in doc["programs"] if e["status"] == "FAILED"]

"""fitalloc run: a program under fitalloc, through LD_PRELOAD.

The command replaces itself with the program (exec), so the program's exit status, its death
by a signal (which a shell shows as 128 + the signal), its pid and its signals are its own.
With --trace it runs the program as its child instead, to list the traces written once the
program has ended (forked children write FILE.PID); the status and a death by a signal still
pass through."""

from __future__ import annotations

import argparse
import glob
import os
import signal
import struct
import subprocess
import sys

from . import locate
from .errors import CommandError
from .replay_tool import INDEXES, POLICIES
from .units import parse_size

LOCKS = ["global", "thread", "arenas"]


def _size(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from e


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "run", help="run a program under fitalloc",
        usage="fitalloc run [options] [--] PROGRAM [ARGS...]",
        description="Run PROGRAM under fitalloc (LD_PRELOAD): the fast engine, or the policy "
                    "lab when --policy, --lock, --index or --arena is given. The exit status "
                    "is the program's.")
    p.add_argument("--policy", choices=POLICIES,
                   help="lab: placement policy (FITALLOC_POLICY; the lab's default: best)")
    p.add_argument("--lock", choices=LOCKS,
                   help="lab: thread-safety strategy (FITALLOC_LOCK; default global)")
    p.add_argument("--index", choices=INDEXES,
                   help="lab: how free blocks are found (FITALLOC_LAB_INDEX; default tree)")
    p.add_argument("--arena", type=_size, metavar="SIZE",
                   help="lab: a fixed heap of SIZE bytes (K, M, G suffixes; FITALLOC_LAB_ARENA)")
    p.add_argument("--secure", action="store_true",
                   help="secure mode: preload libfitalloc-secure.so, FITALLOC_SECURE=1")
    p.add_argument("--stats", action="store_true",
                   help="print statistics to stderr at exit (FITALLOC_STATS=1)")
    p.add_argument("--trace", metavar="FILE",
                   help="write the program's allocations to FILE (FITALLOC_TRACE); a process "
                        "it forks writes FILE.PID; the traces written are listed at the end")
    p.add_argument("--only", action="store_true",
                   help="statistics and trace only for PROGRAM, not for the programs it starts "
                        "under other names (FITALLOC_ONLY=its name)")
    p.add_argument("program", nargs=argparse.REMAINDER, metavar="PROGRAM [ARGS...]",
                   help="the program and its arguments")
    p.set_defaults(func=main)


def environment(args: argparse.Namespace, program: str, library: str,
                base: dict[str, str]) -> dict[str, str]:
    """`base` with the variables that put PROGRAM under fitalloc as asked."""
    env = dict(base)
    # Ours first: a library preloaded earlier would take malloc before fitalloc.
    preload = base.get("LD_PRELOAD", "").strip()
    env["LD_PRELOAD"] = library + (":" + preload if preload else "")
    lab = {"FITALLOC_POLICY": args.policy, "FITALLOC_LOCK": args.lock,
           "FITALLOC_LAB_INDEX": args.index,
           "FITALLOC_LAB_ARENA": None if args.arena is None else str(args.arena)}
    if any(v is not None for v in lab.values()):
        env["FITALLOC_MODE"] = "lab"
        env.update({k: v for k, v in lab.items() if v is not None})
    if args.secure:
        env["FITALLOC_SECURE"] = "1"
    # --stats keeps a FITALLOC_STATS=json the caller set: it asks for the same report.
    if args.stats and base.get("FITALLOC_STATS", "").lower() != "json":
        env["FITALLOC_STATS"] = "1"
    if args.trace is not None:
        # Absolute: the program may change directory before the trace is written.
        env["FITALLOC_TRACE"] = os.path.abspath(args.trace)
    if args.only:
        env["FITALLOC_ONLY"] = os.path.basename(program)
    return env


def check_trace_path(path: str) -> None:
    """Fail before running anything when the library could not create the trace."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise CommandError(f"{path}: the directory {directory} does not exist")
    if os.path.isdir(path):
        raise CommandError(f"{path}: is a directory")
    target = path if os.path.exists(path) else directory
    if not os.access(target, os.W_OK):
        raise CommandError(f"{path}: cannot write {target} (permission denied)")


def trace_files(path: str) -> dict[str, tuple[int, int, int]]:
    """The files PATH and PATH.PID there are, each with what changes when it is written."""
    files = {}
    for name in [path] + sorted(glob.glob(glob.escape(path) + ".*")):
        if name != path and not name[len(path) + 1:].isdigit():
            continue
        try:
            st = os.stat(name)
        except OSError:
            continue
        files[name] = (st.st_ino, st.st_mtime_ns, st.st_size)
    return files


def traces_written(path: str, before: dict[str, tuple[int, int, int]]) -> list[tuple[str, int]]:
    """The traces at PATH and PATH.PID new or written since `before`, with the pid each names."""
    found = []
    for name, stamp in trace_files(path).items():
        if before.get(name) == stamp:
            continue
        try:
            with open(name, "rb") as f:
                header = f.read(24)
        except OSError:
            continue
        # The header's pid: a u32 at byte 20 (docs/trace.md).
        pid = struct.unpack_from("<I", header, 20)[0] if len(header) == 24 else 0
        found.append((name, pid))
    return found


def cannot_start(program: str, e: OSError) -> CommandError:
    """The answer when PROGRAM cannot be started, with a shell's statuses."""
    if isinstance(e, FileNotFoundError):
        return CommandError(f"{program}: command not found", 127)
    if isinstance(e, PermissionError):
        return CommandError(f"{program}: permission denied", 126)
    return CommandError(f"{program}: {e.strerror}", 126)


def run_child(program: list[str], env: dict[str, str]) -> int:
    """Runs the program as a child and returns its status (-SIGNAL when a signal killed it)."""
    # A terminal's Ctrl-C or Ctrl-\ reaches the program too: the command outlives it to read
    # what it wrote. A handler (not SIG_IGN, which exec would keep) leaves the program the default.
    for sig in (signal.SIGINT, signal.SIGQUIT):
        signal.signal(sig, lambda *_: None)
    try:
        child = subprocess.Popen(program, env=env)
    except OSError as e:
        raise cannot_start(program[0], e) from None
    return child.wait()


def end_as(status: int) -> int:
    """The command's exit status for a child's: a death by a signal is died again, so that the
    shell sees the same."""
    if status < 0:
        sys.stdout.flush()
        sys.stderr.flush()
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
        return 128 - status
    return status


def run_traced(program: list[str], env: dict[str, str], path: str) -> int:
    """Run the program as a child, list the traces written, and end as the program did."""
    before = trace_files(path)
    status = run_child(program, env)
    traces = traces_written(path, before)
    for name, pid in traces:
        print(f"fitalloc run: trace of pid {pid}: {name}", file=sys.stderr)
    if not traces:
        print(f"fitalloc run: no trace was written at {path} (a statically linked or setuid "
              "program does not load libfitalloc)", file=sys.stderr)
    return end_as(status)


def main(args: argparse.Namespace, places: locate.Places) -> int:
    program = args.program[1:] if args.program[:1] == ["--"] else args.program
    if not program:
        args.parser.error("no program to run (fitalloc run [options] -- PROGRAM [ARGS...])")
    library = locate.secure_library(places) if args.secure else locate.library(places)
    env = environment(args, program[0], library, dict(os.environ))
    if args.trace is not None:
        check_trace_path(args.trace)
        return run_traced(program, env, env["FITALLOC_TRACE"])
    try:
        os.execvpe(program[0], program, env)
    except OSError as e:
        raise cannot_start(program[0], e) from None
    return 0  # not reached: exec replaced us

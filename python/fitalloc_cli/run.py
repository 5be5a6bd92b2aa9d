"""fitalloc run: a program under fitalloc, through LD_PRELOAD.

The command replaces itself with the program (exec), so the program's exit status, its death
by a signal (which a shell shows as 128 + the signal), its pid and its signals are its own."""

from __future__ import annotations

import argparse
import os

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
                   help="write the program's allocations to FILE (FITALLOC_TRACE)")
    p.add_argument("program", nargs=argparse.REMAINDER, metavar="PROGRAM [ARGS...]",
                   help="the program and its arguments")
    p.set_defaults(func=main)


def environment(args: argparse.Namespace, library: str, base: dict[str, str]) -> dict[str, str]:
    """`base` with the variables that put the program under fitalloc as asked."""
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
    return env


def main(args: argparse.Namespace, places: locate.Places) -> int:
    program = args.program[1:] if args.program[:1] == ["--"] else args.program
    if not program:
        args.parser.error("no program to run (fitalloc run [options] -- PROGRAM [ARGS...])")
    library = locate.secure_library(places) if args.secure else locate.library(places)
    env = environment(args, library, dict(os.environ))
    try:
        os.execvpe(program[0], program, env)
    except FileNotFoundError:
        raise CommandError(f"{program[0]}: command not found", 127) from None
    except PermissionError:
        raise CommandError(f"{program[0]}: permission denied", 126) from None
    except OSError as e:
        raise CommandError(f"{program[0]}: {e.strerror}", 126) from None
    return 0  # not reached: exec replaced us

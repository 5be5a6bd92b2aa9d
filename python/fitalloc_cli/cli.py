"""The fitalloc command's top level: its parser, its subcommands, and how a failure is told
("fitalloc SUBCOMMAND: message" on stderr and an exit status: 1 failure, 2 usage, 3 a trace
that cannot be read)."""

from __future__ import annotations

import argparse
import os
import sys

from . import compare, heapmap, locate, profile, replay, run, stats
from .errors import CommandError

SUBCOMMANDS = [run, profile, replay, heapmap, compare, stats]


def _add_where(subparsers) -> None:
    p = subparsers.add_parser(
        "where", help="print where the library and fitalloc-replay were found",
        description="Print the libfitalloc.so that run preloads and the fitalloc-replay that "
                    "replay, map and compare use (docs/command.md: how they are found).")
    p.set_defaults(func=_where)


def _where(args: argparse.Namespace, places: locate.Places) -> int:
    """Status 1 when the library is missing; fitalloc-replay only matters to some subcommands."""
    status = 0
    for what, find in (("library", locate.library), ("replay", locate.replay)):
        try:
            print(f"{what}: {find(places)}")
        except CommandError as e:
            print(f"{what}: not found: {e.message}")
            status = 1 if what == "library" else status
    return status


def parser(version: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="fitalloc",
        description="Run programs under fitalloc, replay their allocation traces under every "
                    "placement policy of the lab, draw the heap. See docs/command.md.",
        epilog="'fitalloc SUBCOMMAND --help' describes each subcommand.")
    p.add_argument("--version", action="version", version=f"fitalloc {version}")
    subparsers = p.add_subparsers(dest="subcommand", metavar="SUBCOMMAND")
    for module in SUBCOMMANDS:
        module.add_parser(subparsers)
    _add_where(subparsers)
    # Each subcommand's parser, so that a subcommand can report a usage error in its own name.
    for sub in subparsers.choices.values():
        sub.set_defaults(parser=sub)
    return p


def main(library: list[str] | None = None, replay_paths: list[str] | None = None,
         version: str = "?", argv: list[str] | None = None) -> int:
    """Run the command; library and replay_paths: where the launcher expects them."""
    places = locate.Places(library or [], replay_paths or [])
    p = parser(version)
    args = p.parse_args(argv)
    if args.subcommand is None:
        p.print_help(sys.stderr)
        return 2
    try:
        return args.func(args, places)
    except CommandError as e:
        print(f"fitalloc {args.subcommand}: {e.message}", file=sys.stderr)
        return e.code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (fitalloc replay | head): no traceback, no second error at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1

"""Running fitalloc-replay (a C program; its interface is in docs/command.md) and reading what
it writes: the JSON of the replay rows, and with --map-out the blocks and series of every lab
configuration."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys

from . import locate
from .errors import CommandError

POLICIES = ["first", "next", "best", "worst", "segregated", "tlsf", "buddy", "slab"]
INDEXES = ["tree", "list"]
ENGINE = "engine"

# The row fields, in fitalloc-replay's order (its CSV header and JSON keys).
FIELDS = ["config", "ops", "peak_heap", "end_heap", "peak_live", "frag_free_mean",
          "frag_free_end", "frag_largest_mean", "frag_largest_end", "free_blocks_mean",
          "free_blocks_end", "splits", "coalesces", "mean_ns", "p99_ns", "failed", "unmatched",
          "granted_over_requested", "heap_at_peak_live", "peak_live_blocks",
          "heap_at_peak_live_blocks"]


def policy_list(text: str) -> str:
    """argparse type for --policy LIST: "all" or a comma list of policy names."""
    if text == "all":
        return text
    names = text.split(",")
    bad = [n for n in names if n not in POLICIES]
    if bad:
        raise argparse.ArgumentTypeError(
            f"'{text}' is not \"all\" or a comma list of {', '.join(POLICIES)}")
    return text


def add_policy_and_engine(p: argparse.ArgumentParser, engine_help: str) -> None:
    """The --policy LIST and --engine options of the commands that replay a trace."""
    p.add_argument("--policy", type=policy_list, default="all", metavar="LIST",
                   help="all (default) or a comma list of " + ",".join(POLICIES))
    p.add_argument("--engine", action="store_true", help=engine_help)


def positive_int(text: str) -> int:
    """argparse type for counts such as --samples."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"'{text}' is not a positive integer")
    return value


def config_name(policy: str, index: str) -> str:
    """The name fitalloc-replay gives a lab configuration: "best", "best-list"."""
    return policy + ("-list" if index == "list" else "")


def check_trace(trace: str) -> None:
    """A clear message for a trace that is not there; its contents are fitalloc-replay's to
    judge (it names the byte offset of the first bad field)."""
    if not os.path.exists(trace):
        raise CommandError(f"{trace}: no such file")
    if os.path.isdir(trace):
        raise CommandError(f"{trace}: is a directory, not a trace")
    if not os.access(trace, os.R_OK):
        raise CommandError(f"{trace}: cannot be read (permission denied)")


def run(places: locate.Places, trace: str, policy: str = "all", index: str = "tree",
        engine: bool = False, samples: int | None = None, map_out: str | None = None,
        mesh: bool = False) -> dict:
    """Replay `trace` and return fitalloc-replay's JSON document:
    {"trace": path, "records": N, "threads": T, "rows": [{field: value}, ...]}."""
    check_trace(trace)
    exe = locate.replay(places)
    cmd = [exe, trace, "--policy", policy, "--index", index, "--json"]
    if engine:
        cmd.append("--engine")
    if mesh:
        cmd.append("--mesh")
    if samples is not None:
        cmd += ["--samples", str(samples)]
    if map_out is not None:
        cmd += ["--map-out", map_out]
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              errors="replace")
    except OSError as e:
        raise CommandError(f"cannot run {exe}: {e.strerror}") from e
    if proc.returncode != 0:
        raise _failure(exe, proc)
    # Warnings of a successful replay (records skipped, ...) are the user's to see.
    if proc.stderr:
        sys.stderr.write(proc.stderr)
    return _parse(exe, proc.stdout)


def _failure(exe: str, proc: subprocess.CompletedProcess) -> CommandError:
    message = proc.stderr.strip()
    if proc.returncode < 0:
        try:
            name = signal.Signals(-proc.returncode).name
        except ValueError:
            name = f"signal {-proc.returncode}"
        return CommandError(f"{exe} was killed by {name}" + (f": {message}" if message else ""))
    if not message:
        message = f"{exe} exited with status {proc.returncode}"
    # 2 (usage) and 3 (unreadable trace) mean the same for us: pass them through.
    return CommandError(message, proc.returncode if proc.returncode in (2, 3) else 1)


def _parse(exe: str, text: str) -> dict:
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise CommandError(f"{exe} printed no valid JSON ({e})") from e
    rows = doc.get("rows") if isinstance(doc, dict) else None
    if not isinstance(rows, list) or not all(isinstance(r, dict) and "config" in r
                                             for r in rows):
        raise CommandError(f"{exe} printed JSON without a \"rows\" list of configurations")
    return doc


def lab_rows(doc: dict) -> list[dict]:
    """The rows that have a heap map (every configuration but the fast engine)."""
    return [r for r in doc["rows"] if r["config"] != ENGINE]

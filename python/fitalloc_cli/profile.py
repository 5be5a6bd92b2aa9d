"""fitalloc profile: a program run with FITALLOC_PROFILE, then its heap profiles read back: the
call sites holding the most live bytes at the peak and at exit, and a flame graph of the peak
(docs/profile.md). With --show it reads profiles already written instead (a server's dumps on
FITALLOC_PROFILE_SIGNAL, tcmalloc's HEAPPROFILE files)."""

from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
import sys

from . import flamegraph, heapprofile, locate, run
from .errors import CommandError
from .plotting import pyplot
from .replay_tool import POLICIES
from .symbolize import Symbolizer
from .units import count, human_bytes, parse_size

# Frames of the allocator itself, dropped from the inner end of every stack: the site is the
# allocator's caller.
_ALLOCATOR_FILES = re.compile(r"^lib(fitalloc|tcmalloc)[-_.a-z0-9]*\.so")
# PREFIX.PID.peak.heap, PREFIX.PID.exit.heap, PREFIX.PID.N.heap (the Nth on the signal).
_PROFILE_FILE = re.compile(r"\.(\d+)\.(peak|exit|\d+)\.heap$")


def _rate(text: str) -> int:
    try:
        value = parse_size(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from e
    if value == 0:
        raise argparse.ArgumentTypeError("a rate of 0 bytes samples nothing: give 1 or more "
                                         "(the mean bytes between two samples)")
    return value


def _top(text: str) -> int:
    if not text.isdigit() or int(text) == 0:
        raise argparse.ArgumentTypeError(f"'{text}' is not a count of 1 or more")
    return int(text)


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "profile", help="run a program under fitalloc's heap profiler and show its call sites",
        usage="fitalloc profile [options] [--] PROGRAM [ARGS...]\n"
              "       fitalloc profile [options] --show FILE.heap...",
        description="Run PROGRAM under fitalloc with FITALLOC_PROFILE, then print the call "
                    "sites holding the most live bytes at the peak and at exit, symbolised, "
                    "and draw a flame graph of the peak. The exit status is the program's.")
    p.add_argument("--rate", type=_rate, metavar="BYTES",
                   help="mean bytes allocated between two samples (K, M, G suffixes; "
                        "FITALLOC_PROFILE_RATE; the library's default: 512K)")
    p.add_argument("-o", "--output", metavar="DIR", default=".",
                   help="where the profiles and the flame graph go (default: here)")
    p.add_argument("--policy", choices=POLICIES,
                   help="run in the policy lab under this placement policy (as fitalloc run)")
    p.add_argument("--top", type=_top, default=10, metavar="N",
                   help="call sites listed per profile (default 10)")
    p.add_argument("--format", choices=["svg", "png"], default="svg",
                   help="the flame graph's format (default svg)")
    p.add_argument("--show", nargs="+", metavar="FILE.heap",
                   help="read these heap profiles instead of running a program")
    p.add_argument("program", nargs=argparse.REMAINDER, metavar="PROGRAM [ARGS...]",
                   help="the program and its arguments")
    p.set_defaults(func=main)


def _writable_dir(path: str) -> str:
    """The directory, absolute; CommandError before anything runs when it cannot take files."""
    if not os.path.isdir(path):
        what = "not a directory" if os.path.exists(path) else "no such directory"
        raise CommandError(f"-o {path}: {what}")
    if not os.access(path, os.W_OK | os.X_OK):
        raise CommandError(f"-o {path}: cannot write there (permission denied)")
    return os.path.abspath(path)


def site_stacks(profile: heapprofile.HeapProfile, names: Symbolizer):
    """(frames innermost first, live bytes, live blocks, the stack's own addresses) of each
    stack, the allocator's frames dropped."""
    for stack in profile.stacks:
        addresses = list(stack.addresses)
        while len(addresses) > 1 and _ALLOCATOR_FILES.match(
                os.path.basename(names.file_of(addresses[0]))):
            addresses.pop(0)
        yield names.stack(addresses), stack.live_bytes, stack.live_count, tuple(stack.addresses)


def top_sites(profile: heapprofile.HeapProfile, names: Symbolizer, top: int,
              slack: dict | None = None) -> list[tuple]:
    """The `top` call sites by live bytes: (bytes, blocks, site, callers of its largest stack,
    the bytes granted beyond those asked for, from `slack`: heapprofile.read_slack's).
    A site is the innermost frame: the function that called malloc, with its line."""
    sites: dict = {}
    for frames, nbytes, blocks, key in site_stacks(profile, names):
        if nbytes <= 0 or not frames:
            continue
        entry = sites.setdefault(frames[0], [0, 0, 0, [], 0])
        entry[0] += nbytes
        entry[1] += blocks
        entry[4] += (slack or {}).get(key, 0)
        if nbytes > entry[2]:
            entry[2], entry[3] = nbytes, frames[1:]
    ranked = sorted(sites.items(), key=lambda kv: (-kv[1][0], kv[0].label()))
    return [(b, n, site, callers, extra) for site, (b, n, _, callers, extra) in ranked[:top]]


def print_report(what: str, profile: heapprofile.HeapProfile, names: Symbolizer,
                 top: int, slack: dict | None = None) -> None:
    """With `slack` (the lab's), a column says per site the bytes the policy granted beyond
    those asked for: headers excluded, rounding and unsplit remainders in."""
    print(f"{what}: {profile.path}")
    print(f"  {human_bytes(profile.live_bytes)} live in {count(profile.live_count)} blocks; "
          f"{human_bytes(profile.alloc_bytes)} allocated in {count(profile.alloc_count)}")
    sites = top_sites(profile, names, top, slack)
    if not sites:
        print("  no live block")
        return
    if slack is not None:
        print(f"  the policy granted {human_bytes(sum(slack.values()))} beyond the live bytes "
              "(slack: granted less asked for, by site)")
    slack_head = f" {'slack':>10}" if slack is not None else ""
    print(f"  {'live':>10} {'share':>6} {'blocks':>10}{slack_head}  site  < its callers")
    total = max(profile.live_bytes, 1)
    for nbytes, blocks, site, callers, extra in sites:
        chain = "".join(f"  < {f.label()}" for f in callers[:2])
        extra_text = f" {human_bytes(extra):>10}" if slack is not None else ""
        print(f"  {human_bytes(nbytes):>10} {100 * nbytes / total:5.1f}% {count(blocks):>10}"
              f"{extra_text}  {site.label()}{chain}")


def draw_flame(profile: heapprofile.HeapProfile, names: Symbolizer, title: str,
               path: str) -> None:
    stacks = [([f.function for f in reversed(frames)], nbytes)
              for frames, nbytes, _, _ in site_stacks(profile, names)]
    flamegraph.draw(stacks, title, path)


def _read_all(paths: list[str], skip_bad: bool) -> list[tuple[str, heapprofile.HeapProfile]]:
    """Every file read before anything is printed: a bad one stops the command with no report,
    or with skip_bad (the files a program just wrote) is named on stderr and left out."""
    read = []
    for path in paths:
        try:
            read.append((path, heapprofile.read(path)))
        except CommandError as e:
            if not skip_bad:
                raise
            print(f"fitalloc profile: {e.message}", file=sys.stderr)
    return read


def show(paths: list[str], args: argparse.Namespace, out_dir: str, program: str = "") -> None:
    """Prints the report of each profile, and draws the flame graph of each but the exit ones
    (those of other names too, such as tcmalloc's prefix.0001.heap). With a program, a profile
    that cannot be read is named and skipped, so that the program's status still comes out."""
    profiles = _read_all(paths, skip_bad=bool(program))
    pyplot()
    for path, profile in profiles:
        names = Symbolizer(profile)
        base = os.path.basename(path)
        base = base[:-len(".heap")] if base.endswith(".heap") else base
        kind = _PROFILE_FILE.search(path)
        moment, pid = (kind.group(2), f" of pid {kind.group(1)}") if kind else ("", "")
        what = {"peak": "at the peak", "exit": "at exit (not freed)",
                "": f"in {base}"}.get(moment, f"at dump {moment}")
        slack_path = path[:-len(".heap")] + ".slack" if path.endswith(".heap") else ""
        slack = heapprofile.read_slack(slack_path) if os.path.isfile(slack_path) else None
        print_report(f"{what}{pid}", profile, names, args.top, slack)
        if moment != "exit":
            image = os.path.join(out_dir, f"{base}.{args.format}")
            title = (f"live bytes {what}{pid}" + (f": {program}" if program else "") +
                     f", {human_bytes(profile.live_bytes)} in all")
            draw_flame(profile, names, title, image)
            print(f"  flame graph: {image}")
        print()


def _file_order(name: str) -> tuple[int, int, int]:
    """A process's files in the order they were written: peak, signal dumps, exit."""
    pid, kind = _PROFILE_FILE.search(name).groups()
    return (int(pid), {"peak": 0, "exit": 2}.get(kind, 1), int(kind) if kind.isdigit() else 0)


def _profile_files(prefix: str) -> dict[str, tuple[int, int]]:
    files = {}
    for name in glob.glob(glob.escape(prefix) + ".*.heap"):
        if re.fullmatch(re.escape(prefix) + _PROFILE_FILE.pattern, name):
            st = os.stat(name)
            files[name] = (st.st_ino, st.st_mtime_ns)
    return files


def main(args: argparse.Namespace, places: locate.Places) -> int:
    operands = args.program[1:] if args.program[:1] == ["--"] else args.program
    if bool(operands) == bool(args.show):
        args.parser.error("a program to run or --show FILE.heap..., one of the two (fitalloc "
                          "profile [options] -- PROGRAM [ARGS...])")
    out_dir = _writable_dir(args.output)
    if args.show:
        show(args.show, args, out_dir)
        return 0
    if shutil.which(operands[0]) is None:
        raise run.cannot_start(operands[0], FileNotFoundError())
    # matplotlib first: when this Python lacks it, the command starts again under one that has
    # it (plotting.py), which must happen before the program runs.
    pyplot()
    library = locate.library(places)
    as_run = argparse.Namespace(policy=args.policy, lock=None, index=None, arena=None,
                                secure=False, stats=False, trace=None, only=False)
    env = run.environment(as_run, operands[0], library, dict(os.environ))
    prefix = os.path.join(out_dir, os.path.basename(operands[0]))
    env["FITALLOC_PROFILE"] = prefix
    if args.rate is not None:
        env["FITALLOC_PROFILE_RATE"] = str(args.rate)
    before = _profile_files(prefix)
    status = run.run_child(operands, env)
    written = sorted((name for name, stamp in _profile_files(prefix).items()
                      if before.get(name) != stamp),
                     key=_file_order)
    sys.stdout.flush()
    if written:
        show(written, args, out_dir, program=operands[0])
    else:
        print(f"fitalloc profile: no heap profile was written at {prefix}.PID.peak.heap (a "
              "statically linked or setuid program does not load libfitalloc)", file=sys.stderr)
    if status == 0 and not written:
        return 1
    return run.end_as(status)

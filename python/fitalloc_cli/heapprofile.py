"""Reading a heap profile in the text format of gperftools (what FITALLOC_PROFILE writes, and
tcmalloc's HEAPPROFILE; docs/profile.md):

    heap profile:   LIVE_COUNT:  LIVE_BYTES [ALLOC_COUNT: ALLOC_BYTES] @ KIND
      LIVE_COUNT:  LIVE_BYTES [ALLOC_COUNT: ALLOC_BYTES] @ 0xADDR 0xADDR ...   (one per stack)

    MAPPED_LIBRARIES:
    (the process's /proc/self/maps)

A stack's addresses are return addresses, innermost first. KIND "heapprofile" (tcmalloc's
HEAPPROFILE) holds exact counts; "heap_v2/RATE" (FITALLOC_PROFILE's) holds samples taken at a
mean distance of RATE bytes, scaled back here as pprof does it: a line of N blocks and B bytes
stands for N and B times 1 / (1 - exp(-(B / N) / RATE)), the inverse of the chance that a
block of B / N bytes is sampled."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from .errors import CommandError

_HEADER = re.compile(r"^heap profile:\s*(\d+):\s*(\d+)\s*\[\s*(\d+):\s*(\d+)\s*\]\s*@\s*(\S+)")
_SAMPLED = re.compile(r"^heap_v2/(\d+)$")
_STACK = re.compile(r"^\s*(\d+):\s*(\d+)\s*\[\s*(\d+):\s*(\d+)\s*\]\s*@((?:\s+0x[0-9a-fA-F]+)*)\s*$")
_MAP = re.compile(r"^([0-9a-fA-F]+)-([0-9a-fA-F]+)\s+(\S+)\s+([0-9a-fA-F]+)\s+\S+\s+\d+\s*(.*)$")


@dataclass
class Stack:
    live_count: int
    live_bytes: int
    alloc_count: int
    alloc_bytes: int
    addresses: list[int]


@dataclass
class Mapping:
    start: int
    end: int
    perms: str
    offset: int
    path: str


@dataclass
class HeapProfile:
    path: str
    live_count: int
    live_bytes: int
    alloc_count: int
    alloc_bytes: int
    stacks: list[Stack] = field(default_factory=list)
    mappings: list[Mapping] = field(default_factory=list)


def _bad(path: str, number: int, what: str) -> CommandError:
    return CommandError(f"{path}: line {number}: {what}")


def parse(path: str, text: str) -> HeapProfile:
    """The profile in `text` (read from `path`, named in errors); CommandError when it is not
    one, with the line that is wrong."""
    lines = text.splitlines()
    if not lines:
        raise CommandError(f"{path}: empty (the process ended before writing it, by _exit or "
                           "a signal)")
    header = _HEADER.match(lines[0])
    if header is None:
        raise _bad(path, 1, "not a heap profile (gperftools' text format starts with "
                            "'heap profile: N: B [N: B] @ heapprofile')")
    sampled = _SAMPLED.match(header.group(5))
    if header.group(5) not in ("heapprofile", "heap") and not (sampled and int(sampled[1])):
        raise _bad(path, 1, f"profile kind '{header.group(5)}' is not read (only heapprofile "
                            "and heap_v2/RATE)")
    profile = HeapProfile(path, *(int(header.group(i)) for i in range(1, 5)))
    in_maps = False
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        if line.startswith("MAPPED_LIBRARIES:"):
            in_maps = True
        elif in_maps:
            m = _MAP.match(line)
            if m is None:
                raise _bad(path, number, f"not a line of /proc/self/maps: '{line[:80]}'")
            profile.mappings.append(Mapping(int(m.group(1), 16), int(m.group(2), 16), m.group(3),
                                            int(m.group(4), 16), m.group(5).strip()))
        else:
            m = _STACK.match(line)
            if m is None:
                raise _bad(path, number, f"not a stack line 'N: B [N: B] @ 0x...': '{line[:80]}'")
            counts = [int(m.group(i)) for i in range(1, 5)]
            if sampled:
                counts = _unsampled(*counts[:2], int(sampled[1])) + \
                    _unsampled(*counts[2:], int(sampled[1]))
            profile.stacks.append(Stack(*counts, [int(a, 16) for a in m.group(5).split()]))
    if sampled:
        # The header holds the samples' own sums; the estimates are the scaled lines' sums.
        profile.live_count, profile.live_bytes, profile.alloc_count, profile.alloc_bytes = (
            sum(getattr(s, f) for s in profile.stacks)
            for f in ("live_count", "live_bytes", "alloc_count", "alloc_bytes"))
    return profile


def _unsampled(count: int, nbytes: int, rate: int) -> list[int]:
    if count == 0 or nbytes == 0:
        return [count, nbytes]
    scale = 1 / -math.expm1(-(nbytes / count) / rate)
    return [round(count * scale), round(nbytes * scale)]


_SLACK_HEADER = re.compile(r"^fitalloc slack profile:\s*heap_v2/(\d+)\s*$")
_SLACK_STACK = re.compile(r"^\s*(\d+):\s*(\d+)\s+(\d+)\s*@((?:\s+0x[0-9a-fA-F]+)*)\s*$")


def parse_slack(path: str, text: str) -> dict[tuple[int, ...], int]:
    """The PREFIX.PID.MOMENT.slack file beside a .heap file (the lab's): by stack (its
    addresses), the bytes the policy granted beyond those asked for, scaled as the .heap file's
    line of that stack is (its samples' bytes per sample give the chance they were taken)."""
    lines = text.splitlines()
    header = _SLACK_HEADER.match(lines[0]) if lines else None
    if header is None or not int(header[1]):
        raise _bad(path, 1, "not a slack profile ('fitalloc slack profile: heap_v2/RATE')")
    rate = int(header[1])
    slack = {}
    for number, line in enumerate(lines[1:], start=2):
        m = _SLACK_STACK.match(line)
        if m is None:
            raise _bad(path, number, f"not a stack line 'N: B G @ 0x...': '{line[:80]}'")
        count, nbytes, granted = (int(m.group(i)) for i in range(1, 4))
        scale = 1 / -math.expm1(-(nbytes / count) / rate) if count and nbytes else 1
        key = tuple(int(a, 16) for a in m.group(4).split())
        slack[key] = slack.get(key, 0) + round(max(granted - nbytes, 0) * scale)
    return slack


def _text(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError as e:
        raise CommandError(f"{path}: {e.strerror}") from None


def read_slack(path: str) -> dict[tuple[int, ...], int]:
    return parse_slack(path, _text(path))


def read(path: str) -> HeapProfile:
    return parse(path, _text(path))

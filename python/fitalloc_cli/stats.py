"""fitalloc stats: the JSON that FITALLOC_STATS=json prints at exit, as readable tables.

The JSON is one line on the program's stderr, often among other lines (the program's own,
other processes'), so every {"fitalloc": ...} and {"fitalloc_lab": ...} object in the text is
found and printed, in order: the fast engine's (src/engine/stats.c) and the lab's (src/lab/lab_stats.c)."""

from __future__ import annotations

import argparse
import json
import sys

from . import locate
from .errors import CommandError
from .units import count, human_bytes

KEYS = ("fitalloc", "fitalloc_lab")

# Labels of the fields; a field not listed (a newer library) is printed under its key.
LABELS = {
    "allocs": "allocations", "frees": "frees", "bytes_in_use": "in use",
    "large_allocs": "large allocations", "large_frees": "large frees",
    "large_in_use": "large in use", "reserved": "reserved", "committed": "committed",
    "peak_committed": "peak committed", "purged": "purged", "segments": "segments",
    "threads": "threads", "abandoned": "abandoned segments",
    "mesh_detached": "meshing: detached pages", "mesh_saved": "meshing: saved",
    "mesh_returned": "meshing: returned", "mesh_merges": "meshing: merges",
    "mallocs": "mallocs", "reuses": "reuses", "grows": "grows", "splits": "splits",
    "coalesces": "coalesces", "blocks": "blocks", "requested": "requested",
    "granted": "granted", "max_heap": "max heap (payloads, headers excluded)", "free_blocks": "free blocks", "free_bytes": "free bytes",
    "largest_free": "largest free block", "average_free_block": "average free block",
    "heap_bytes": "heap bytes (headers included)", "free_space_with_headers": "free space with headers",
    "direct_allocs": "direct allocations", "direct_frees": "direct frees",
    "direct_bytes": "direct bytes", "lock_acquisitions": "lock acquisitions",
    "lock_contended": "lock contended", "futex_waits": "futex waits",
    "futex_wakes": "futex wakes", "heaps": "heaps",
    "frag_free_over_heap": "fragmentation (free / heap)",
    "frag_largest_over_free": "fragmentation (1 - largest / free)",
    "frag_granted_over_requested": "internal fragmentation (granted / requested)",
}
BYTES = {"bytes_in_use", "large_in_use", "reserved", "committed", "peak_committed", "purged",
         "mesh_saved", "mesh_returned",
         "requested", "granted", "max_heap", "free_bytes", "largest_free", "average_free_block",
         "heap_bytes", "free_space_with_headers", "direct_bytes"}
# Shown in the title line, not as rows.
LAB_CONFIG = ("pid", "policy", "index", "lock", "coalesce", "arena")


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "stats", help="pretty-print a FITALLOC_STATS=json dump",
        description="Print the statistics that FITALLOC_STATS=json wrote (to stderr, at exit) "
                    "as tables. FILE may hold other lines too; - reads standard input.")
    p.add_argument("file", metavar="FILE", help="the saved stderr of the program, or -")
    p.set_defaults(func=main)


def find_objects(text: str) -> list[tuple[str, dict]]:
    """Every fitalloc statistics object in `text`, as (key, fields), in order."""
    decoder = json.JSONDecoder()
    found = []
    pos = 0
    while True:
        start = text.find('{"fitalloc', pos)
        if start < 0:
            return found
        try:
            obj, end = decoder.raw_decode(text, start)
        except ValueError:
            pos = start + 1  # a cut or garbled object: look for the next one
            continue
        pos = end
        if isinstance(obj, dict) and len(obj) == 1:
            key, fields = next(iter(obj.items()))
            if key in KEYS and isinstance(fields, dict):
                found.append((key, fields))


def _value(key: str, v) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.6f}"
    if isinstance(v, int):
        if key not in BYTES:
            return count(v)
        return human_bytes(v) if v < 1024 else f"{human_bytes(v)}  ({count(v)} bytes)"
    return json.dumps(v)


def _rows(fields: dict, skip) -> list[str]:
    items = [(LABELS.get(k, k), _value(k, v)) for k, v in fields.items()
             if k not in skip and not isinstance(v, (list, dict))]
    width = max((len(label) for label, _ in items), default=0)
    return [f"  {label:<{width}}  {value}" for label, value in items]


def _size_classes(classes: list, cols=("block", "allocs", "frees", "live")) -> list[str]:
    cells = [[count(c.get(k)) if isinstance(c.get(k), int) else "-" for k in cols]
             for c in classes if isinstance(c, dict)]
    if not cells:
        return []
    widths = [max(len(r[i]) for r in cells + [cols]) for i in range(len(cols))]
    lines = [f"  size classes ({len(cells)} in use)",
             "    " + "  ".join(h.rjust(w) for h, w in zip(cols, widths))]
    lines += ["    " + "  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in cells]
    return lines


def format_fast(fields: dict) -> str:
    lines = [f"fitalloc statistics (fast engine, pid {fields.get('pid', '?')})"]
    lines += _rows(fields, skip={"pid"})
    classes = fields.get("size_classes")
    if isinstance(classes, list):
        lines += _size_classes(classes)
    return "\n".join(lines) + "\n"


def format_lab(fields: dict) -> str:
    arena = fields.get("arena")
    coalesce = fields.get("coalesce")
    config = [f"pid {fields.get('pid', '?')}", f"policy {fields.get('policy', '?')}",
              f"index {fields.get('index', '?')}", f"lock {fields.get('lock', '?')}",
              "coalescing " + ("?" if coalesce is None else "on" if coalesce else "off"),
              "arena " + (human_bytes(arena) if arena else "none (the heap grows)")]
    lines = [f"fitalloc lab statistics ({', '.join(config)})"]
    lines += _rows(fields, skip=set(LAB_CONFIG))
    classes = fields.get("size_classes")
    if isinstance(classes, list):
        lines += _size_classes(classes, ("block", "mallocs", "requested", "granted"))
    return "\n".join(lines) + "\n"


def read_input(name: str) -> str:
    if name == "-":
        return sys.stdin.buffer.read().decode("utf-8", errors="replace")
    try:
        with open(name, "rb") as f:
            return f.read().decode("utf-8", errors="replace")
    except FileNotFoundError:
        raise CommandError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise CommandError(f"{name}: is a directory") from None
    except OSError as e:
        raise CommandError(f"{name}: {e.strerror}") from None


def main(args: argparse.Namespace, places: locate.Places) -> int:
    text = read_input(args.file)
    objects = find_objects(text)
    if not objects:
        where = "standard input" if args.file == "-" else args.file
        raise CommandError(f"{where}: no fitalloc statistics found (a line with the JSON object "
                           "that FITALLOC_STATS=json prints at exit, e.g. "
                           "FITALLOC_STATS=json fitalloc run -- PROGRAM 2>FILE)")
    out = [format_lab(f) if key == "fitalloc_lab" else format_fast(f) for key, f in objects]
    sys.stdout.write("\n".join(out))
    return 0

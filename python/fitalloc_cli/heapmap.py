"""fitalloc map: the heap of one lab configuration over a trace's replay, drawn into a file.
The drawing modules need numpy and matplotlib: they are imported once plotting.pyplot() has
found them, so that the other subcommands run without them."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from typing import TYPE_CHECKING

from . import locate, plotting, replay_tool
from .errors import CommandError
from .units import human_bytes

if TYPE_CHECKING:
    from .mapdata import HeapMap


def cell_grid(text: str) -> tuple[int, int]:
    """argparse type for --cells WIDTHxHEIGHT."""
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        w = h = 0
    if not (1 <= w <= 20000 and 1 <= h <= 20000):
        raise argparse.ArgumentTypeError(f"'{text}' is not WIDTHxHEIGHT (e.g. 1200x600)")
    return w, h


def add_common(p: argparse.ArgumentParser) -> None:
    """The options map and compare share."""
    p.add_argument("trace", metavar="TRACE", help="the trace file")
    p.add_argument("--index", choices=replay_tool.INDEXES, default="tree",
                   help="the lab's free-block index (default tree)")
    p.add_argument("--samples", type=replay_tool.positive_int, metavar="N",
                   help="points of the heap and fragmentation curves (default 1000)")
    p.add_argument("--cells", type=cell_grid, default=(1200, 600), metavar="WxH",
                   help="the map's grid of cells, operations x addresses (default 1200x600)")


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "map", help="draw the heap over a trace's replay",
        description="Replay TRACE under one policy and draw its heap: the operations across, "
                    "the heap's addresses up, used blocks coloured by size, free space in "
                    "salmon; under it the heap and live bytes and the fragmentation. Under buddy, "
                    "tlsf and slab, a second image (FILE-structure.png) draws the family's "
                    "structure where the live bytes peaked: the split tree, the lists, the "
                    "pages. With --engine, the fast engine's pages instead (with --mesh, as "
                    "meshing gives their memory back).")
    add_common(p)
    p.add_argument("--policy", choices=replay_tool.POLICIES, default="best",
                   help="the placement policy (default best)")
    p.add_argument("--engine", action="store_true",
                   help="draw the fast engine's pages over the replay instead of a lab heap")
    p.add_argument("--mesh", action="store_true",
                   help="with --engine: meshing on (FITALLOC_MESH=1), a pass at every sample "
                        "point; the meshed share of each page in blue")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="the image (.png, .svg, .pdf; default TRACE-CONFIG.png here)")
    p.set_defaults(func=main)


def program_name(trace: str) -> str:
    """The program a trace's file name names, for the titles: `sort.fat` -> `sort`; a child's
    trace (`gcc.fat.1176`, written by the process gcc forked) -> `gcc (process 1176)`."""
    name = os.path.basename(trace)
    stem, dot, pid = name.rpartition(".")
    if dot and pid.isdigit() and stem.endswith(".fat"):
        return f"{stem[:-len('.fat')]} (process {pid})"
    return name[:-len(".fat")] if name.endswith(".fat") and len(name) > 4 else name


def title(trace: str, hm: "HeapMap", row: dict) -> str:
    """The line above a map: the program, the configuration, its size."""
    peak = row.get("peak_heap")
    return (f"{program_name(trace)} replayed under {hm.config}: {hm.ops:,} operations, "
            f"{len(hm.blocks):,} blocks" + (f", peak heap {human_bytes(peak)}" if peak else ""))


def engine_main(args: argparse.Namespace, places: locate.Places) -> int:
    """fitalloc map --engine [--mesh]: the engine's pages."""
    config = "engine-mesh" if args.mesh else "engine"
    out = args.output or f"{os.path.splitext(os.path.basename(args.trace))[0]}-{config}.png"
    if os.path.dirname(out) and not os.path.isdir(os.path.dirname(out)):
        raise CommandError(f"{out}: the directory {os.path.dirname(out)} does not exist")
    plt = plotting.pyplot()
    from . import pagemap

    with tempfile.TemporaryDirectory(prefix="fitalloc-map.") as tmp:
        doc = replay_tool.run(places, args.trace, policy="none", engine=True, mesh=args.mesh,
                              samples=args.samples, map_out=tmp)
        row = next((r for r in doc["rows"] if r["config"] == config), None)
        if row is None:
            raise CommandError(f"fitalloc-replay gave no row named {config}")
        pm = pagemap.load(tmp, config)
    text = (f"{program_name(args.trace)} replayed under the fast engine"
            f"{' with meshing' if args.mesh else ''}: peak committed "
            f"{human_bytes(row['peak_heap'])} (purging deferred in a replay)")
    try:
        what = pagemap.draw(pm, text, out, plt, row["peak_heap"])
    except (OSError, ValueError) as e:
        raise CommandError(f"{out}: cannot write the image ({e})") from None
    print(f"{out}: {what}", file=sys.stderr)
    return 0


def main(args: argparse.Namespace, places: locate.Places) -> int:
    if args.mesh and not args.engine:
        raise CommandError("--mesh draws the fast engine: give --engine too")
    if args.engine:
        return engine_main(args, places)
    config = replay_tool.config_name(args.policy, args.index)
    out = args.output or f"{os.path.splitext(os.path.basename(args.trace))[0]}-{config}.png"
    if os.path.dirname(out) and not os.path.isdir(os.path.dirname(out)):
        raise CommandError(f"{out}: the directory {os.path.dirname(out)} does not exist")
    replay_tool.check_trace(args.trace)
    plt = plotting.pyplot()
    from . import familydraw, familymap, mapdata, mapdraw

    with tempfile.TemporaryDirectory(prefix="fitalloc-map.") as tmp:
        doc = replay_tool.run(places, args.trace, policy=args.policy, index=args.index,
                              samples=args.samples, map_out=tmp)
        row = next((r for r in doc["rows"] if r["config"] == config), None)
        if row is None:
            raise CommandError(f"fitalloc-replay gave no row named {config}")
        hm = mapdata.load(tmp, config, row.get("ops"))
    try:
        mapdraw.single(hm, title(args.trace, hm, row), out, args.cells, plt)
    except (OSError, ValueError) as e:
        raise CommandError(f"{out}: cannot write the image ({e})") from None
    print(f"{out}: {config}, {hm.ops:,} operations, {len(hm.blocks):,} blocks", file=sys.stderr)
    if familymap.family_of(config):
        structure = structure_path(out)
        try:
            what = familydraw.draw(hm, title(args.trace, hm, row), structure, plt)
        except (OSError, ValueError) as e:
            raise CommandError(f"{structure}: cannot write the image ({e})") from None
        print(f"{structure}: {what}", file=sys.stderr)
    return 0


def structure_path(out: str) -> str:
    """Where the family's structure goes: beside the map, '-structure' before the suffix."""
    stem, ext = os.path.splitext(out)
    return f"{stem}-structure{ext or '.png'}"

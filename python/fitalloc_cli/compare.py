"""fitalloc compare: every policy's heap map side by side on the same scales, with the replay
table; writes DIR/compare.png, DIR/<config>.png, DIR/replay.md and DIR/replay.json."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile

from . import heapmap, locate, plotting, replay_tool, rows
from .errors import CommandError


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "compare", help="draw every policy's heap map side by side, with the replay table",
        description="Replay TRACE under every placement policy (or those of --policy) and "
                    "write into DIR: compare.png (every map on the same scales, the table "
                    "under them), one CONFIG.png per configuration, replay.md (the table) "
                    "and replay.json (fitalloc-replay's rows).")
    heapmap.add_common(p)
    p.add_argument("-o", "--output", metavar="DIR", required=True,
                   help="the directory to write into (created if missing)")
    replay_tool.add_policy_and_engine(
        p, "also replay through the fast engine (a table row; it has no map)")
    p.add_argument("--keep-csv", action="store_true",
                   help="keep fitalloc-replay's blocks and series files in DIR/csv")
    p.set_defaults(func=main)


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise CommandError(f"{path}: {e.strerror}") from None


def main(args: argparse.Namespace, places: locate.Places) -> int:
    replay_tool.check_trace(args.trace)
    plt = plotting.pyplot()
    from . import mapdata, mapdraw  # numpy and matplotlib: only now that they are there

    out = args.output
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        raise CommandError(f"{out}: cannot create the directory ({e.strerror})") from None
    tmp = tempfile.mkdtemp(prefix="fitalloc-compare.")
    try:
        doc = replay_tool.run(places, args.trace, policy=args.policy, index=args.index,
                              engine=args.engine, samples=args.samples, map_out=tmp)
        maps = [mapdata.load(tmp, r["config"], r.get("ops")) for r in replay_tool.lab_rows(doc)]
        if args.keep_csv:
            shutil.copytree(tmp, os.path.join(out, "csv"), dirs_exist_ok=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if not maps:
        raise CommandError("fitalloc-replay gave no lab configuration to draw")

    _write(os.path.join(out, "replay.json"), json.dumps(doc, indent=2) + "\n")
    _write(os.path.join(out, "replay.md"), rows.markdown_table(doc))
    written = ["replay.json", "replay.md"]
    name = heapmap.program_name(args.trace)
    # The single maps use the shared scales too, so that flipping between them compares.
    scale = mapdraw.Scale.of(maps)
    try:
        for hm in maps:
            row = next(r for r in doc["rows"] if r["config"] == hm.config)
            mapdraw.single(hm, heapmap.title(args.trace, hm, row),
                           os.path.join(out, f"{hm.config}.png"), args.cells, plt, scale)
            written.append(f"{hm.config}.png")
        title = f"{name}: {maps[0].ops:,} operations under {len(maps)} configurations"
        mapdraw.side_by_side(maps, doc["rows"], title, os.path.join(out, "compare.png"),
                             args.cells, plt)
        written.append("compare.png")
    except (OSError, ValueError) as e:
        raise CommandError(f"{out}: cannot write an image ({e})") from None
    sys.stdout.write(rows.text_table(doc))
    print(f"{out}: {', '.join(written)}", file=sys.stderr)
    return 0

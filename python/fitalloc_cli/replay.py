"""fitalloc replay: a trace replayed under the lab's policies (and the fast engine), as one
table; the replay itself is fitalloc-replay's (C)."""

from __future__ import annotations

import argparse
import json
import sys

from . import locate, replay_tool, rows


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "replay", help="replay a trace under every policy and print one table",
        description="Replay TRACE (written by fitalloc run --trace or FITALLOC_TRACE) under the "
                    "lab's placement policies, and with --engine through the fast engine, and "
                    "print one row per configuration: heap, live bytes, fragmentation, free "
                    "blocks, splits, coalesces, cost per operation.")
    p.add_argument("trace", metavar="TRACE", help="the trace file")
    replay_tool.add_policy_and_engine(p, "also replay through the fast engine")
    p.add_argument("--index", choices=replay_tool.INDEXES, default="tree",
                   help="the lab's free-block index (default tree)")
    p.add_argument("--samples", type=replay_tool.positive_int, metavar="N",
                   help="points the means are taken over (fitalloc-replay's default: 1000)")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print fitalloc-replay's JSON")
    fmt.add_argument("--csv", action="store_true", help="print CSV (empty cells for null)")
    p.set_defaults(func=main)


def main(args: argparse.Namespace, places: locate.Places) -> int:
    doc = replay_tool.run(places, args.trace, policy=args.policy, index=args.index,
                          engine=args.engine, samples=args.samples)
    if args.json:
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    elif args.csv:
        sys.stdout.write(rows.csv_table(doc))
    else:
        sys.stdout.write(rows.text_table(doc))
    return 0

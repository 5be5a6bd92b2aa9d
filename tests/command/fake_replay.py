"""A stand-in for fitalloc-replay with its interface (docs/command.md), for the command's
tests: the command is tested on its own, whatever the real replay computes. It checks the
trace's magic only, and instead of replaying the trace it runs a small free-list simulation
(first/next/best/worst fit, segregated, tlsf, buddy and slab as best) over a fixed pseudo-random sequence of
allocations, so that the maps of the policies differ. Every call appends its arguments as one
JSON line to $FAKE_REPLAY_LOG when set. FAKE_REPLAY_SYNTH=N writes N regular blocks instead (a
large map, fast). FAKE_REPLAY_FAIL=N exits with N and a message after parsing;
FAKE_REPLAY_BADMAP=1 writes blocks files with a wrong header."""

import argparse
import json
import os
import random
import sys

POLICIES = ["first", "next", "best", "worst", "segregated", "tlsf", "buddy", "slab"]
FIELDS = ["config", "ops", "peak_heap", "end_heap", "peak_live", "frag_free_mean",
          "frag_free_end", "frag_largest_mean", "frag_largest_end", "free_blocks_mean",
          "free_blocks_end", "splits", "coalesces", "mean_ns", "p99_ns", "failed", "unmatched",
          "granted_over_requested", "heap_at_peak_live", "peak_live_blocks",
          "heap_at_peak_live_blocks"]


def die(code, msg):
    print(f"fitalloc-replay: {msg}", file=sys.stderr)
    sys.exit(code)


class Parser(argparse.ArgumentParser):
    def error(self, message):
        die(2, message)


def simulate(policy, n_ops, samples):
    """A boundary-tag-free toy heap: a list of [offset, size, free] blocks in address order."""
    rnd = random.Random(42)
    heap, blocks, series = [], [], []
    live = {}  # id -> (block index in `blocks`, offset)
    rover = 0
    splits = coalesces = 0
    top = peak_heap = live_bytes = peak_live = 0
    frag_sum = largest_sum = fb_sum = 0.0
    every = max(1, n_ops // samples)
    next_id = 0
    for op in range(n_ops):
        if live and (rnd.random() < 0.45 or len(live) > 300):
            key = rnd.choice(list(live))
            b, off = live.pop(key)
            blocks[b][1] = op
            i = next(k for k, h in enumerate(heap) if h[0] == off)
            heap[i][2] = True
            live_bytes -= blocks[b][3]
            for j in (i + 1, i):  # merge with the next, then with the previous
                if 0 < j < len(heap) and heap[j][2] and heap[j - 1][2]:
                    heap[j - 1][1] += heap[j][1]
                    del heap[j]
                    coalesces += 1
        else:
            size = 16 * rnd.choice([1, 1, 2, 3, 4, 8, 16, 64])
            fits = [k for k, h in enumerate(heap) if h[2] and h[1] >= size]
            if policy == "first":
                pick = fits[0] if fits else None
            elif policy == "next":
                later = [k for k in fits if heap[k][0] >= rover]
                pick = (later or fits or [None])[0]
            elif policy == "worst":
                pick = max(fits, key=lambda k: heap[k][1]) if fits else None
            else:
                pick = min(fits, key=lambda k: (heap[k][1], k)) if fits else None
            if pick is None:
                heap.append([top, size, False])
                off = top
                top += size
            else:
                h = heap[pick]
                off = h[0]
                if h[1] - size >= 32:
                    heap.insert(pick + 1, [off + size, h[1] - size, True])
                    h[1] = size
                    splits += 1
                h[2] = False
                size = h[1]
            rover = off
            live[next_id] = (len(blocks), off)
            next_id += 1
            blocks.append([op, -1, off, size])
            live_bytes += size
        free = [h[1] for h in heap if h[2]]
        free_bytes = sum(free)
        peak_heap, peak_live = max(peak_heap, top), max(peak_live, live_bytes)
        frag = free_bytes / top if top else 0.0
        largest = 1 - max(free) / free_bytes if free_bytes else 0.0
        frag_sum, largest_sum, fb_sum = frag_sum + frag, largest_sum + largest, fb_sum + len(free)
        if op % every == 0 or op == n_ops - 1:
            series.append([op, top, live_bytes, free_bytes, max(free, default=0), len(free)])
    row = {"config": policy, "ops": n_ops, "peak_heap": peak_heap, "end_heap": top,
           "peak_live": peak_live, "frag_free_mean": frag_sum / n_ops, "frag_free_end": frag,
           "frag_largest_mean": largest_sum / n_ops, "frag_largest_end": largest,
           "free_blocks_mean": fb_sum / n_ops, "free_blocks_end": len(free), "splits": splits,
           "coalesces": coalesces, "mean_ns": 41.5, "p99_ns": 120, "failed": 0, "unmatched": 0,
           "granted_over_requested": 1.0, "heap_at_peak_live": peak_heap,
           "peak_live_blocks": peak_live, "heap_at_peak_live_blocks": peak_heap}
    return row, blocks, series


def synthetic(policy, n_blocks):
    """n_blocks 64-byte blocks in 1000 slots, each block freed when the next one of its slot
    comes (every fifth 400 operations earlier, leaving a hole): regular, and quick to write."""
    blocks = [[i, -1 if i + 1000 >= n_blocks else i + (600 if i % 5 == 0 else 1000),
               (i % 1000) * 64, 64] for i in range(n_blocks)]
    ops = n_blocks + 1000
    series = [[op, 64000, 40000, 24000, 64, 300] for op in range(0, ops, max(1, ops // 1000))]
    row = {"config": policy, "ops": ops, "peak_heap": 64000, "end_heap": 64000,
           "peak_live": 40000, "frag_free_mean": 0.375, "frag_free_end": 0.375,
           "frag_largest_mean": 0.99, "frag_largest_end": 0.99, "free_blocks_mean": 300.0,
           "free_blocks_end": 300, "splits": 0, "coalesces": 0, "mean_ns": 30.0, "p99_ns": 90,
           "failed": 0, "unmatched": 0, "granted_over_requested": 1.0,
           "heap_at_peak_live": 64000, "peak_live_blocks": 40000,
           "heap_at_peak_live_blocks": 64000}
    return row, blocks, series


def main():
    p = Parser(prog="fitalloc-replay")
    p.add_argument("trace")
    p.add_argument("--policy", default="all")
    p.add_argument("--index", choices=["tree", "list"], default="tree")
    p.add_argument("--engine", action="store_true")
    p.add_argument("--json", action="store_true")
    p.add_argument("--csv", action="store_true")
    p.add_argument("--map-out")
    p.add_argument("--samples", type=int, default=1000)
    p.add_argument("--dump", action="store_true")
    args = p.parse_args()
    if os.environ.get("FAKE_REPLAY_LOG"):
        with open(os.environ["FAKE_REPLAY_LOG"], "a") as f:
            f.write(json.dumps(sys.argv[1:]) + "\n")
    policies = POLICIES if args.policy == "all" else args.policy.split(",")
    if any(name not in POLICIES for name in policies):
        die(2, f"--policy {args.policy}: not all or a list of {','.join(POLICIES)}")
    if args.json and args.csv:
        die(2, "--json and --csv exclude each other")
    try:
        with open(args.trace, "rb") as f:
            magic = f.read(64)
    except OSError as e:
        die(3, f"{args.trace}: {e.strerror}")
    if magic[:8] != b"FATRACE\0":
        die(3, f"{args.trace}: byte 0: not a fitalloc trace (bad magic)")
    if len(magic) < 64:
        die(3, f"{args.trace}: byte {len(magic)}: the header is cut short")
    if os.environ.get("FAKE_REPLAY_FAIL"):
        die(int(os.environ["FAKE_REPLAY_FAIL"]), f"{args.trace}: byte 4160: record 85 has a "
            "bad check byte")
    if args.dump:
        return 0
    synth = int(os.environ.get("FAKE_REPLAY_SYNTH", "0"))
    bad_map = os.environ.get("FAKE_REPLAY_BADMAP") == "1"
    rows = []
    for policy in policies:
        config = policy + ("-list" if args.index == "list" else "")
        row, blocks, series = synthetic(config, synth) if synth else simulate(policy, 2000,
                                                                              args.samples)
        row["config"] = config
        rows.append(row)
        if args.map_out:
            os.makedirs(args.map_out, exist_ok=True)
            with open(os.path.join(args.map_out, f"{config}.blocks.csv"), "w") as f:
                f.write("alloc_op,free_op,offset,size\n" if not bad_map else "bogus\n")
                f.writelines(f"{a},{b},{c},{d}\n" for a, b, c, d in blocks)
            with open(os.path.join(args.map_out, f"{config}.series.csv"), "w") as f:
                f.write("op,heap_bytes,live_bytes,free_bytes,largest_free,free_blocks\n")
                f.writelines(",".join(str(v) for v in s) + "\n" for s in series)
    if args.engine:
        engine = dict(rows[0], config="engine", frag_largest_mean=None, frag_largest_end=None,
                      free_blocks_mean=None, free_blocks_end=None, splits=None, coalesces=None)
        rows.append(engine)
    if args.json:
        print(json.dumps({"trace": args.trace, "records": 2000, "threads": 1, "rows": rows}))
    elif args.csv:
        print(",".join(FIELDS))
        for r in rows:
            print(",".join("" if r[f] is None else str(r[f]) for f in FIELDS))
    else:
        print(" ".join(FIELDS))
        for r in rows:
            print(" ".join("-" if r[f] is None else str(r[f]) for f in FIELDS))
    return 0


if __name__ == "__main__":
    sys.exit(main())

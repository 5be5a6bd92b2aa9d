"""The replay table: fitalloc-replay's rows as aligned text, Markdown or CSV."""

from __future__ import annotations

import csv
import io

from .replay_tool import FIELDS
from .units import count, human_bytes


def _text(v) -> str:
    return "?" if v is None else str(v)


def _frac(v) -> str:
    return "-" if v is None else f"{v:.4f}"


def _mean(v) -> str:
    return "-" if v is None else f"{v:,.1f}"


def _ns(v) -> str:
    return "-" if v is None else f"{v:,.0f}"


# (header, field, format) of the displayed columns, in fitalloc-replay's field order.
COLUMNS = [
    ("config", "config", _text),
    ("ops", "ops", count),
    ("peak heap", "peak_heap", human_bytes),
    ("end heap", "end_heap", human_bytes),
    ("peak live", "peak_live", human_bytes),
    ("frag free", "frag_free_mean", _frac),
    ("(end)", "frag_free_end", _frac),
    ("frag largest", "frag_largest_mean", _frac),
    ("(end)", "frag_largest_end", _frac),
    ("free blocks", "free_blocks_mean", _mean),
    ("(end)", "free_blocks_end", count),
    ("splits", "splits", count),
    ("coalesces", "coalesces", count),
    ("mean ns", "mean_ns", _ns),
    ("p99 ns", "p99_ns", _ns),
    ("failed", "failed", count),
    ("unmatched", "unmatched", count),
    ("granted/req", "granted_over_requested", _frac),
]

# Why the engine's heap is bigger than the lab's in a replay: said under every table with an
# engine row, so that nobody reads it as what the program held.
ENGINE_NOTE = ("engine: heap = the fast engine's committed bytes, with purging deferred: a "
               "replay runs far faster than the program, and purges go by the clock, so no "
               "memory goes back to the OS (but what meshing gives back); it is the most the "
               "engine would hold, not what the program held.")

LEGEND = ("heap: the lab heap's size; live: bytes of live blocks as requested; frag free = free "
          "bytes / heap bytes; frag largest = 1 - largest free block / free bytes; frag and "
          "free blocks: the mean over the replay, then (end) after its last operation; mean ns, "
          "p99 ns: the cost of one operation; failed: allocations that returned NULL; "
          "unmatched: frees of pointers the trace never returned; granted/req: usable bytes "
          "granted / bytes requested (internal fragmentation); -: not defined for the fast "
          "engine.")


def _cells(rows: list[dict]) -> list[list[str]]:
    return [[fmt(row.get(field)) for _, field, fmt in COLUMNS] for row in rows]


def heading(doc: dict) -> str:
    return (f"trace {doc.get('trace', '?')}: {count(doc.get('records'))} records, "
            f"{count(doc.get('threads'))} threads")


def _has_engine(doc: dict) -> bool:
    return any(str(row.get("config", "")).startswith("engine") for row in doc["rows"])


def text_table(doc: dict) -> str:
    """Aligned columns: the config left-aligned, numbers right-aligned; the engine's note."""
    cells = [[h for h, _, _ in COLUMNS]] + _cells(doc["rows"])
    widths = [max(len(r[i]) for r in cells) for i in range(len(COLUMNS))]
    lines = [heading(doc)]
    for n, row in enumerate(cells):
        parts = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:])]
        lines.append("  ".join(parts).rstrip())
        if n == 0:
            lines.append("-" * len(lines[-1]))
    if _has_engine(doc):
        lines += ["", ENGINE_NOTE]
    return "\n".join(lines) + "\n"


def markdown_table(doc: dict) -> str:
    lines = [heading(doc) + ".", "",
             "| " + " | ".join(h for h, _, _ in COLUMNS) + " |",
             "|---|" + "---:|" * (len(COLUMNS) - 1)]
    for row in _cells(doc["rows"]):
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", LEGEND + (" " + ENGINE_NOTE if _has_engine(doc) else "")]
    return "\n".join(lines) + "\n"


def csv_table(doc: dict) -> str:
    """fitalloc-replay's own CSV: its field names, raw numbers, empty for null."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(FIELDS)
    for row in doc["rows"]:
        writer.writerow(["" if row.get(f) is None else row.get(f) for f in FIELDS])
    return out.getvalue()

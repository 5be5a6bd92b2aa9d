"""The report's section for the study "real programs, replayed" (replay_study.py): per program
the replay table and the side-by-side maps, and a reading computed from the rows: which policy
kept the smallest peak heap, by how much, and what the fast engine held beside it."""

from __future__ import annotations

ENGINE = "engine"
TITLE = "Real programs, replayed"


def _kib(n) -> str:
    return "-" if n is None else f"{n / 1024:,.0f} KiB"


def _frac(v) -> str:
    return "-" if v is None else f"{v:.3f}"


def _pair(row: dict, field: str, fmt) -> str:
    """The mean over the replay and, in parentheses, the value after its last operation."""
    mean, end = row.get(f"{field}_mean"), row.get(f"{field}_end")
    return "-" if mean is None else f"{fmt(mean)} ({fmt(end)})"


def _count(v) -> str:
    return "-" if v is None else f"{v:,}"


HEADER = ["config", "ops", "peak heap", "end heap", "frag free", "frag largest", "free blocks",
          "splits", "coalesces", "mean ns", "p99 ns"]


def table(rows: list[dict], smallest: set[str]) -> list[str]:
    """The rows as Markdown; the lab configurations with the smallest peak heap in bold."""
    out = ["| " + " | ".join(HEADER) + " |", "|" + "---|" + "---:|" * (len(HEADER) - 1)]
    for r in rows:
        name = f"**{r['config']}**" if r["config"] in smallest else r["config"]
        cells = [name, _count(r.get("ops")), _kib(r.get("peak_heap")), _kib(r.get("end_heap")),
                 _pair(r, "frag_free", _frac), _pair(r, "frag_largest", _frac),
                 _pair(r, "free_blocks", lambda v: f"{v:,.0f}"),
                 _count(r.get("splits")), _count(r.get("coalesces")),
                 "-" if r.get("mean_ns") is None else f"{r['mean_ns']:,.0f}",
                 _count(r.get("p99_ns"))]
        out.append("| " + " | ".join(cells) + " |")
    return out


def smallest_peak(rows: list[dict]) -> list[dict]:
    """The lab configurations whose peak heap is the smallest (several on a tie)."""
    lab = [r for r in rows if r["config"] != ENGINE and r.get("peak_heap") is not None]
    if not lab:
        return []
    low = min(r["peak_heap"] for r in lab)
    return [r for r in lab if r["peak_heap"] == low]


def reading(entry: dict) -> str:
    """One sentence: the smallest peak heap, the others in % above it, the engine's factor."""
    rows = entry["rows"]
    best = smallest_peak(rows)
    if not best:
        return f"{entry['name']}: no lab configuration replayed."
    low = best[0]["peak_heap"]
    names = " and ".join(r["config"] for r in best)
    others = sorted((r for r in rows if r["config"] != ENGINE and r not in best
                     and r.get("peak_heap") is not None), key=lambda r: r["peak_heap"])
    above = ", ".join(f"{r['config']} +{100 * (r['peak_heap'] / low - 1):.1f} %" for r in others)
    text = f"**{entry['name']}**: {names} kept the smallest peak heap, {_kib(low)}"
    text += f" ({above})" if above else ""
    engine = next((r for r in rows if r["config"] == ENGINE and r.get("peak_heap")), None)
    if engine and low:
        text += (f"; the fast engine held {engine['peak_heap'] / low:.1f}x that "
                 f"({_kib(engine['peak_heap'])} committed)")
    return text + "."


def overall(entries: list[dict]) -> str | None:
    """Which policies had the smallest peak heap, on how many of the programs replayed."""
    wins: dict[str, list[str]] = {}
    done = [e for e in entries if e["status"] == "ok" and smallest_peak(e["rows"])]
    for e in done:
        for r in smallest_peak(e["rows"]):
            wins.setdefault(r["config"], []).append(e["name"])
    if not done:
        return None
    parts = [f"{name} on {len(progs)} of {len(done)} ({', '.join(progs)})"
             for name, progs in sorted(wins.items(), key=lambda kv: (-len(kv[1]), kv[0]))]
    return "Smallest peak heap: " + "; ".join(parts) + "."


def section(doc: dict | None, skipped: str | None = None) -> list[str]:
    """report.md's lines for the study (doc: study.json's document), or a line saying why
    it did not run."""
    out = [f"## {TITLE}", ""]
    if doc is None:
        return out + [f"{skipped or 'replay study: not run'}.", ""]
    entries = doc["programs"]
    out += ["Real programs Debian ships, traced under fitalloc (`fitalloc run --trace`) on "
            "inputs the bench generates, each trace replayed under every placement policy of "
            "the lab and through the fast engine (`fitalloc-replay --engine --json`) and "
            "drawn side by side (`fitalloc compare`). Heaps are the lab heap's size (headers "
            "included) and, for the engine, its committed memory; frag free = free / heap, "
            "frag largest = 1 - largest free block / free, free blocks: the mean over the "
            "replay, then (after its last operation); mean and p99 ns: one operation in the "
            "replay (one thread, program order), not in the program. The smallest peak heap "
            "among the policies is in bold. docs/bench.md explains the study, "
            "docs/replay.md the fields.", "",
            f"Scale {doc['scale']:g}; the study took {doc['seconds']:.0f} s "
            "(tracing, replaying, drawing), after the timed runs. Files: `replay/`.", ""]
    lines = [reading(e) for e in entries if e["status"] == "ok"]
    summary = overall(entries)
    if lines:
        out += ["**Reading.**", ""] + [f"- {line}" for line in lines]
        out += ([f"- {summary}"] if summary and len(lines) > 1 else []) + [""]
    for e in entries:
        out += [f"### {e['name']}", "", f"{e['what']}."]
        if e["status"] == "missing":
            out += ["", f"Not studied: {e['note']}.", ""]
            continue
        if e["command"]:
            out += ["", f"`{e['command']}`"]
        if e["status"] == "FAILED":
            out += ["", f"**FAILED**: {e['note']}", ""]
            continue
        procs = (f"; the largest of {e['processes']} process traces" if e["processes"] > 1
                 else "")
        steps = ", ".join(f"{what} {e[key]:.1f} s" for what, key in
                          (("traced", "trace_s"), ("replayed", "replay_s"),
                           ("drawn", "compare_s")) if e.get(key) is not None)
        out += ["", f"{_count(e['records'])} operations, {e['threads']} thread(s){procs}; "
                f"{steps}.", ""]
        out += table(e["rows"], {r["config"] for r in smallest_peak(e["rows"])})
        # WHY only the first row: unmatched frees are the trace's, the same in every row.
        unmatched = e["rows"][0].get("unmatched") if e["rows"] else 0
        if unmatched:
            out += ["", f"{unmatched:,} frees of pointers the trace never returned (allocated "
                    "before tracing began) were skipped."]
        if any(r.get("failed") for r in e["rows"]):
            out += ["", "Allocations that failed in the replay: "
                    + ", ".join(f"{r['config']} {r['failed']:,}" for r in e["rows"]
                                if r.get("failed")) + "."]
        out.append("")
        if e.get("maps"):
            out += [f"![{e['name']}: every policy's heap over time]"
                    f"(replay/{e['name']}/{e['maps']}/compare.png)", "",
                    f"One map per policy: `replay/{e['name']}/{e['maps']}/<policy>.png`.", ""]
        elif e["note"]:
            out += [f"No maps: {e['note']}.", ""]
    return out


def terminal_lines(doc: dict) -> list[str]:
    """The reading for the terminal: plain text, one line per program."""
    out = [f"\nreplay study ({doc['seconds']:.0f} s; report.md has the tables and maps):"]
    for e in doc["programs"]:
        status = "not studied" if e["status"] == "missing" else e["status"]
        line = reading(e) if e["status"] == "ok" else f"{e['name']}: {status}: {e['note']}"
        out.append("  " + line.replace("**", ""))
    summary = overall(doc["programs"])
    if summary and len(doc["programs"]) > 1:
        out.append("  " + summary)
    return out

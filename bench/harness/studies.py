"""Each classic study's own table, with the numbers it reported beside ours.

The reported numbers and the reference-model numbers live in bench/studies.json (taken from
workloads.md). A study's table is made when at least one of its cases ran; figures that need
the policy lab show '-' when it did not run.
"""

from __future__ import annotations

import json
import math
import statistics

from .allocators import LAB_CONFIGS
from .paths import STUDIES_JSON
from .summary import Cell


def load() -> dict:
    with open(STUDIES_JSON) as f:
        return json.load(f)


def num(x, digits: int = 0) -> str:
    """1 234 567 style (thin groups), '-' for missing."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if isinstance(x, str):
        return x
    if digits:
        return f"{x:,.{digits}f}".replace(",", " ")
    return f"{int(round(x)):,}".replace(",", " ")


def int32(x: float) -> int:
    """What a C `static int` counter printed: the value wrapped to 32 bits."""
    v = int(x) % (1 << 32)
    return v - (1 << 32) if v >= 1 << 31 else v


def span(xs: list[float], digits: int) -> str:
    if not xs:
        return "-"
    return (f"{statistics.median(xs):.{digits}f} "
            f"({min(xs):.{digits}f}–{max(xs):.{digits}f})")


def row(*cols) -> str:
    return "| " + " | ".join(str(c) for c in cols) + " |"


def header(*cols) -> list[str]:
    return [row(*cols), "|" + "---|" * len(cols)]


class View:
    """The summary cells of one bench run, as the tables need them."""

    def __init__(self, cells: dict[tuple[str, str], Cell], allocs_of: dict[str, list[str]]):
        self.cells = cells
        self.allocs_of = allocs_of

    def ran(self, case: str) -> bool:
        return bool(self.allocs_of.get(case))

    def allocs(self, case: str) -> list[str]:
        return self.allocs_of.get(case, [])

    def cell(self, case: str, alloc: str) -> Cell | None:
        return self.cells.get((case, alloc))

    def fig(self, case: str, alloc: str, key: str) -> float:
        c = self.cell(case, alloc)
        return c.fig(key) if c else math.nan

    def figs(self, case: str, alloc: str, key: str) -> list[float]:
        c = self.cell(case, alloc)
        return c.figures.get(key, []) if c else []


def ece650_ts(v: View, s: dict) -> list[str]:
    case = "ece650-ts"
    if not v.ran(case):
        return []
    by_lab = {info["lab"]: info for info in s["reported"].values()}
    out = header("allocator", "kit version", "time s reported (mean of 3)",
                 "time s ours (median, min–max)", "data segment B reported (mean)",
                 "heap growth B ours (lab) / program break growth", "peak RSS MiB")
    for a in v.allocs(case):
        rep = by_lab.get(a)
        growth = v.fig(case, a, "measurement.heap_growth")
        growth_text = (num(growth) if not math.isnan(growth)
                       else f"brk +{num(v.fig(case, a, 'measurement.sbrk_growth'))}")
        c = v.cell(case, a)
        out.append(row(a, rep["label"] if rep else "-",
                       f"{statistics.mean(rep['time_s']):.4f}" if rep else "-",
                       span(v.figs(case, a, "measurement.time_s"), 4),
                       num(statistics.mean(rep["data_segment"])) if rep else "-",
                       growth_text, num(c.med("rss") if c else math.nan, 1)))
    m = s["model"]
    out += ["", f"Reference model ({s['spec']}): data segment {num(m['data_segment'])} B for both "
            f"versions, {m['time_s']}. Peers get their memory with mmap, so their program "
            "break hardly moves: compare peak RSS. The time is the kit's window (thread "
            "creation to the last join)."]
    return out


def ece650_fit(v: View, s: dict) -> list[str]:
    if not any(v.ran(c) for c in s["cases"].values()):
        return []
    # The study's numbers belong to a policy, whichever index our configuration searches with.
    policy_of = {lab: env.get("FITALLOC_POLICY") for lab, (_, env) in LAB_CONFIGS.items()}
    out = header("test", "allocator", "time s reported", "time s ours (median)",
                 "frag (old) reported", "frag old ours", "frag old model", "frag new ours",
                 "frag new model", "segment B ours", "segment B model", "free blocks ours",
                 "free blocks model")
    for test, case in s["cases"].items():
        for a in v.allocs(case):
            p = policy_of.get(a)
            rep = s["reported"][test].get(p, {}) if p else {}
            mod = s["model"][test].get(p, {}) if p else {}
            out.append(row(test, a, num(rep.get("time_s"), 2), num(v.fig(case, a, "time_s"), 3),
                           num(rep.get("frag"), 2), num(v.fig(case, a, "frag_old"), 4),
                           num(mod.get("frag_old"), 4), num(v.fig(case, a, "frag_new"), 4),
                           num(mod.get("frag_new"), 4), num(v.fig(case, a, "segment_bytes")),
                           num(mod.get("segment")), num(v.fig(case, a, "free_blocks")),
                           num(mod.get("free_blocks"))))
    out += ["", "Fragmentation needs the allocator's free space, so only lab runs have it: "
            "old = free space with headers / heap bytes (what the report printed), new = 1 − "
            "largest free block / total free. equal samples at i = NUM_ITERS/2, j = 5000; small "
            "and large at the end. The reported times are for the original sizes on the "
            "report's machine with O(n) lists: the *-list configurations search the same way "
            "(and choose the same blocks as the tree index)."]
    return out


def cse3320(v: View, s: dict) -> list[str]:
    cases = [c for c in ("cse3320", "cse3320-faithful") if v.ran(c)]
    if not cases:
        return []
    policies = s["policies"]
    out = []
    for case in cases:
        labs = [lab for lab in policies.values() if lab in v.allocs(case)]
        wrap = case == "cse3320-faithful"
        out += [f"**{case}**" + (" (ours also as the report's 32-bit counters would print "
                                 "them, in brackets)" if wrap else ""), ""]
        out += header("counter", "expected", *[f"reported {p}" for p in policies], *labs)
        exp = s["expected"][case]
        for k in s["counters"] + ["free_blocks"]:
            ours = []
            for lab in labs:
                x = v.fig(case, lab, k)
                text = num(x)
                if wrap and not math.isnan(x) and x >= 1 << 31:
                    text += f" [{num(int32(x))}]"
                ours.append(text)
            reported = [num(s["reported"][p].get(k)) if k in s["reported"][p] else "-"
                        for p in policies]
            if k in ("coalesces", "blocks"):
                i = 0 if k == "coalesces" else 1
                expected = "model " + " / ".join(
                    f"{p[0].upper()}F {s['model_coalesces_blocks'][p][i]}" for p in policies)
            else:
                expected = num(exp.get(k))
            out.append(row(k, expected, *reported, *ours))
        out.append("")
        out += header("allocator", "reported mean time s", "ours: wall s (median, min–max)")
        reported_of = {"glibc": s["reported_time_s"]["system"]}
        reported_of.update({lab: s["reported_time_s"][p] for p, lab in policies.items()})
        for a in v.allocs(case):
            c = v.cell(case, a)
            out.append(row(a, num(reported_of.get(a), 3), span(c.wall if c else [], 4)))
        out.append("")
    out += [f"Expected values: {s['expected_note']}. Reported numbers are the report's "
            "(requested and max heap wrapped at 32 bits; the BF column has typos, "
            "workloads.md §3.4). The report's times are of an unoptimised build. The lab splits "
            "a block only when the rest can be a 48-byte free block (16-byte header, index links, "
            "footer), the template from 29 bytes: under first and best fit 18 fewer splits, and "
            "as many fewer merges, than the template's model, with the same number of blocks."]
    return out


def id1206(v: View, s: dict) -> list[str]:
    case = "id1206"
    if not v.ran(case):
        return []
    labels = {lab: label for label, lab in s["configs"].items()}
    out = header("allocator", "what", "failed at loop", "allocs", "frees", "free-list length",
                 "free-list / frees", "free space B", "avg free block B", "reported",
                 "reference model")
    for a in v.allocs(case):
        failed = v.fig(case, a, "failed_at")
        frees = v.fig(case, a, "frees")
        length = v.fig(case, a, "freelist_length")
        # The study's "free-list length is ~80 % of the frees" is about the run that failed.
        share = (f"{100 * length / frees:.0f} %" if failed and not math.isnan(length) and frees > 0
                 else "-")
        rep = s["reported"].get(a, {})
        mod = s["model"].get(a, {})
        out.append(row(a, labels.get(a, "-"), "-" if failed == 0 else num(failed),
                       num(v.fig(case, a, "allocs")), num(frees), num(length), share,
                       num(v.fig(case, a, "free_space")), num(v.fig(case, a, "avg_free_block"), 1),
                       "; ".join(f"{k} {x}" for k, x in rep.items()) or "-",
                       "; ".join(f"{k} {x}" for k, x in mod.items()) or "-"))
    out += ["", "Free-list figures come from the lab (payload bytes, headers not counted). "
            "Other allocators never fail here: they are not confined to 64 KiB."]
    return out


def cs33(v: View, s: dict) -> list[str]:
    cases = [c for c in s["reported"] if v.ran(c)]
    if not cases:
        return []
    out = header("test", "allocator", "reported real / user / sys s",
                 "ours wall / user / sys s (median)", "reported ns per op (real)",
                 "ours ns per op (wall)", "vs glibc reported", "vs glibc ours")
    for case in cases:
        rep = s["reported"][case]
        g = v.cell(case, "glibc")
        for a in v.allocs(case):
            c = v.cell(case, a)
            r = rep.get(a)
            ops = v.fig(case, a, rep["ops_key"])
            wall = c.med("wall") if c else math.nan
            ours_ns = wall / ops * 1e9 if ops and not math.isnan(ops) else math.nan
            rep_ns = r["real"] / rep["ops"] * 1e9 if r else math.nan
            rel_rep = (r["real"] / rep["glibc"]["real"]) if r else math.nan
            rel_ours = wall / g.med("wall") if g and g.wall and c and c.wall else math.nan
            out.append(row(case, a, f"{r['real']} / {r['user']} / {r['sys']}" if r else "-",
                           (f"{c.med('wall'):.3f} / {c.med('user'):.3f} / {c.med('sys'):.3f}"
                            if c and c.wall else "-"),
                           num(rep_ns, 1), num(ours_ns, 1), num(rel_rep, 2), num(rel_ours, 2)))
    out += ["", f"Reported on a {s['machine']} at the original sizes (3.2e8 pairs; 1.3e8 "
            "mallocs); ours at the bench's size on this machine, so compare ns per operation "
            "and the ratios to glibc (ptmalloc), not seconds."]
    return out


STUDY_TABLES = [("ece650-ts", ece650_ts), ("ece650-fit", ece650_fit), ("cse3320", cse3320),
                ("id1206", id1206), ("cs33", cs33)]


def tables(cells: dict, allocs_of: dict[str, list[str]]) -> list[tuple[str, str, list[str]]]:
    """(study id, title, markdown lines) for every study with a case in this run."""
    data = load()
    view = View(cells, allocs_of)
    out = []
    for sid, fn in STUDY_TABLES:
        lines = fn(view, data[sid])
        if lines:
            out.append((sid, f"{data[sid]['title']} ({data[sid]['spec']})", lines))
    return out

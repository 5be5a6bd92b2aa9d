"""The raw results: every run as CSV and JSON, and the summary as JSON.

runs.csv      one row per run, in run order (seq): the interleaving can be read from it
figures.csv   one row per figure a run printed (seq, case, allocator, key, value)
runs.json     every run with its figures and histogram
summary.json  per case and allocator: medians, min, max, ratios; per allocator: geometric means
              over all cases and without the cases of known pathologies; the short cases
"""

from __future__ import annotations

import csv
import json
import math
import os
from dataclasses import asdict

from .pathologies import FACTOR, Outlier
from .runner import Run
from .summary import SHORT_S, Overall, each_cell, ratio

RUN_COLUMNS = ["seq", "rep", "case", "workload", "threads", "allocator", "position", "size",
               "wall_s", "user_s", "sys_s", "maxrss_kib", "exit_code", "status", "checksum",
               "note"]


def _num(x: float):
    return None if isinstance(x, float) and math.isnan(x) else x


def write_runs_csv(path: str, runs: list[Run], size: str) -> None:
    with open(path, "w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(RUN_COLUMNS)
        for r in runs:
            wr.writerow([r.seq, r.rep + 1, r.case, r.workload,
                         "" if r.threads is None else r.threads, r.allocator, r.position, size,
                         f"{r.wall_s:.6f}", f"{r.user_s:.6f}", f"{r.sys_s:.6f}", r.maxrss_kib,
                         r.exit_code, r.status, r.checksum, r.note])


def write_figures_csv(path: str, runs: list[Run]) -> None:
    with open(path, "w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(["seq", "case", "allocator", "key", "value"])
        for r in runs:
            for k, v in r.figures.items():
                wr.writerow([r.seq, r.case, r.allocator, k, repr(v)])


def write_runs_json(path: str, runs: list[Run]) -> None:
    with open(path, "w") as f:
        json.dump([{k: _num(v) for k, v in asdict(r).items()} for r in runs], f, indent=1)


def _means(rows: list[Overall]) -> list[dict]:
    return [{k: _num(v) for k, v in asdict(o).items()} for o in rows]


def write_summary_json(path: str, meta: dict, cells: dict, case_ids: list[str],
                       allocs_of: dict[str, list[str]], ref: str,
                       overall: list[Overall], without: list[Overall] | None = None,
                       found: list[Outlier] | None = None,
                       short: list[str] | None = None) -> None:
    """geometric_means: over all cases; geometric_means_without_pathologies: without the cases
    listed in its 'left_out' (the same as geometric_means when none is)."""
    found = found or []
    out_cells = []
    for cid, a, c, refc in each_cell(cells, case_ids, allocs_of, ref):
        out_cells.append({
            "case": cid, "allocator": a, "runs": c.n, "ok": c.n_ok,
            "wall_s": {"median": _num(c.med("wall")), "min": min(c.wall, default=None),
                       "max": max(c.wall, default=None)},
            "cpu_s": _num(c.med("cpu")),
            "maxrss_mib": _num(c.med("rss")),
            "time_ratio": _num(ratio(c.med("wall"), refc.med("wall")) if refc else math.nan),
            "rss_ratio": _num(ratio(c.med("rss"), refc.med("rss")) if refc else math.nan),
            "figures": {k: _num(c.fig(k)) for k in sorted(c.figures)},
        })
    known = [o for o in found if o.known]
    doc = {"meta": meta, "reference": ref, "cells": out_cells,
           "geometric_means": _means(overall),
           "geometric_means_without_pathologies": {
               "left_out": list(dict.fromkeys(o.case for o in known)),
               "means": _means(without if without is not None else overall)},
           "pathology_factor": FACTOR,
           "outliers": [{"case": o.case, "allocator": o.allocator, "factor": _num(o.factor),
                         "known": o.known, "reason": o.reason} for o in found],
           "short_cases": list(short or []), "short_under_s": SHORT_S}
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)


def write_all(out_dir: str, runs: list[Run], size: str, meta: dict, cells: dict,
              case_ids: list[str], allocs_of: dict[str, list[str]], ref: str,
              overall: list[Overall], without: list[Overall] | None = None,
              found: list[Outlier] | None = None, short: list[str] | None = None) -> None:
    os.makedirs(out_dir, exist_ok=True)
    write_runs_csv(os.path.join(out_dir, "runs.csv"), runs, size)
    write_figures_csv(os.path.join(out_dir, "figures.csv"), runs)
    write_runs_json(os.path.join(out_dir, "runs.json"), runs)
    write_summary_json(os.path.join(out_dir, "summary.json"), meta, cells, case_ids, allocs_of,
                       ref, overall, without, found, short)

"""report.md: what ran, the tables, the plots and the studies, in one Markdown file."""

from __future__ import annotations

from . import machine_load
from .pathologies import FACTOR
from .runner import Run
from .summary import SHORT_S
from .table import SHORT_MARK


FRAGMENTATION_FILES = ("- `fragmentation/`: the fragmentation study: `fragmentation.json` (every "
                       "measure per program and policy), `fragmentation.md` (its tables), "
                       "`fragmentation.png` (the plot)")


def write_study_only(path: str, meta: dict, fragmentation: list[str], study: list[str],
                     failed: list[str]) -> None:
    """report.md of `--study fragmentation`: the fragmentation tables, then the replay study
    they come from."""
    out = [f"# fitalloc fragmentation study — {meta['started']}", "",
           f"- command: `{meta['command']}`", f"- machine: {meta['machine']}",
           f"- {meta['duration']}", "", *fragmentation, *study]
    if failed:
        out += ["## FAILED", ""] + [f"- replay study, {f}" for f in failed] + [""]
    out += ["## Files", "", FRAGMENTATION_FILES,
            "- `replay/`: `study.json`, per program `replay.json`, `maps/`, `input/`, "
            "`program.out`", ""]
    with open(path, "w") as f:
        f.write("\n".join(out))


def write(path: str, meta: dict, overall_lines: list[str], ahead_lines: list[str],
          table_lines: list[str], plots: list[tuple[str, str]], plot_notes: list[str],
          studies: list[tuple[str, str, list[str]]], runs: list[Run],
          study: list[str] | None = None, study_failed: list[str] | None = None,
          fragmentation: list[str] | None = None,
          redis: list[str] | None = None, redis_failed: list[str] | None = None) -> None:
    """ahead_lines: the section "Where a peer is ahead" (losses.py); study: the replay study's
    section (study_report.py), None when it was not wanted; study_failed: its failures,
    listed with the FAILED runs; fragmentation: the fragmentation table computed from the
    replay study (frag_study.py); redis, redis_failed: the same for the Redis study
    (redis_study.py)."""
    out = [f"# fitalloc bench report — {meta['started']}", ""]
    out += [f"- command: `{meta['command']}`",
            f"- machine: {meta['machine']}",
            f"- size **{meta['size']}**, {meta['reps']} repetitions, interleaved (rotated order "
            f"per repetition); ratios are median / median vs **{meta['reference']}**",
            f"- {meta['runs']} runs, {meta['failed']} FAILED, {meta['duration']}"]
    if meta.get("load"):
        out += machine_load.header_lines(meta["load"])
    out.append("")
    out += ["| allocator | library | settings |", "|---|---|---|"]
    for a in meta["allocators"]:
        out.append(f"| {a['name']} | `{a['preload'] or '(glibc, no preload)'}` | "
                   f"{a['env'] or '-'} |")
    if meta["notes"]:
        out += ["", "Notes:", ""] + [f"- {n}" for n in meta["notes"]]
    out += ["", "## Summary", "", "```", *overall_lines, "```", "",
            "Per allocator, the geometric mean over the cases of median(allocator) / "
            "median(reference); `cases` counts the cases it passed out of those it ran. "
            "Lab configurations run only on the cases where they make sense, so their means "
            "cover fewer cases.", "",
            "Two means: over all cases, and without the cases where one peer has a known "
            "pathology in this run (listed above with its reason: a table in "
            f"`bench/harness/pathologies.py`; the peer is more than {FACTOR:g}x the median of "
            "the other peers there). Such a case says more about that peer than about the "
            "others: when the peer is the reference it makes every other allocator look "
            "several times better. Only the table's cases are ever left out; any other outlier "
            "is named and kept in both means.", ""]
    out += ahead_lines
    out += ["## All cases", "", "```", *table_lines, "```", ""]
    if any(line.startswith(f"{SHORT_MARK} short:") for line in table_lines):
        out += [f"Cases marked `{SHORT_MARK}` are short: under {SHORT_S:g} s under the "
                "reference, they mostly measure process start and exit, which cost every "
                "allocator the same, so their ratios are close to 1 whatever the allocator "
                "does.", ""]
    if plots or plot_notes:
        out += ["## Plots", ""]
        for name, caption in plots:
            out += [f"![{name}](plots/{name})", "", caption, ""]
        out += [f"- not drawn: {n}" for n in plot_notes]
        out.append("")
    if studies:
        out += ["## The classic studies", "",
                "Each study's own table with the numbers it reported beside ours "
                "(reported and reference-model numbers: bench/studies.json).", ""]
        for _, title, lines in studies:
            out += [f"### {title}", "", *lines, ""]
    if fragmentation:
        out += fragmentation
    if study:
        out += study
    if redis:
        out += redis
    failed = [r for r in runs if not r.ok]
    if failed or study_failed or redis_failed:
        out += ["## FAILED runs", ""]
        out += [f"- rep {r.rep + 1} {r.case} / {r.allocator}: {r.note}" for r in failed]
        out += [f"- replay study, {f}" for f in study_failed or []]
        out += [f"- Redis study, {f}" for f in redis_failed or []]
        out.append("")
    out += ["## Files", "",
            "- `runs.csv`: one row per run in run order (seq, rep, case, allocator, position in "
            "the rotation, wall/user/sys seconds, peak RSS KiB, exit code, status, checksum, note)",
            "- `figures.csv`: every `key value` figure a run printed (workload figures, lab.*)",
            "- `runs.json`, `summary.json`: the same, and the medians and ratios, as JSON",
            "- `plots/`: the PNG plots above"]
    if fragmentation:
        out += [FRAGMENTATION_FILES]
    if study:
        out += ["- `replay/`: the replay study: `study.json` (what ran, how long, every row), "
                "per program `replay.json` (fitalloc-replay's rows), `maps/` (fitalloc "
                "compare's images and table), `input/` (the generated input), `program.out`"]
    if redis:
        out += ["- `redis/`: the Redis study: `redis.json` (every run with its RSS and PSS "
                "samples, and the medians), `redis_memory.png` (the plot above)"]
    out.append("")
    with open(path, "w") as f:
        f.write("\n".join(out))

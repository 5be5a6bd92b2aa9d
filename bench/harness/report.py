"""report.md: what ran, the tables, the plots and the studies, in one Markdown file."""

from __future__ import annotations

from .runner import Run


def write(path: str, meta: dict, overall_lines: list[str], table_lines: list[str],
          plots: list[tuple[str, str]], plot_notes: list[str],
          studies: list[tuple[str, str, list[str]]], runs: list[Run]) -> None:
    out = [f"# fitalloc bench report — {meta['started']}", ""]
    out += [f"- command: `{meta['command']}`",
            f"- machine: {meta['machine']}",
            f"- size **{meta['size']}**, {meta['reps']} repetitions, interleaved (rotated order "
            f"per repetition); ratios are median / median vs **{meta['reference']}**",
            f"- {meta['runs']} runs, {meta['failed']} FAILED, {meta['duration']}", ""]
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
            "cover fewer cases.", ""]
    out += ["## All cases", "", "```", *table_lines, "```", ""]
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
    failed = [r for r in runs if not r.ok]
    if failed:
        out += ["## FAILED runs", ""]
        out += [f"- rep {r.rep + 1} {r.case} / {r.allocator}: {r.note}" for r in failed]
        out.append("")
    out += ["## Files", "",
            "- `runs.csv`: one row per run in run order (seq, rep, case, allocator, position in "
            "the rotation, wall/user/sys seconds, peak RSS KiB, exit code, status, checksum, note)",
            "- `figures.csv`: every `key value` figure a run printed (workload figures, lab.*)",
            "- `runs.json`, `summary.json`: the same, and the medians and ratios, as JSON",
            "- `plots/`: the PNG plots above", ""]
    with open(path, "w") as f:
        f.write("\n".join(out))

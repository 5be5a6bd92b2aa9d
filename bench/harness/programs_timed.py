"""The timed real-program study (issue 38): programs Debian ships, each run on a generated input
under every allocator, interleaved (round by round, the allocators' order shuffled in each round
from a recorded seed), each run's output checked against glibc's; time, CPU time (user + system,
the program's children included) and peak RSS, and their geometric means against glibc. Time and
CPU time are paired: each round's ratio to glibc's run of the same round, the median over rounds.

`bash tools/bench.sh --study programs` runs it alone (not in the default run). The inputs come
from a scale (1: about 1-5 s a run on 2 cores; the bench's tests use a tiny one).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass

from . import allocators as al
from . import study_programs as sp

DEFAULT_SCALE = 1.0
SEED = 38  # of the allocators' order in each round; programs.json records it and every order
RUN_TIMEOUT_S = 120
TIME = "/usr/bin/time"  # GNU time (Debian package time)


@dataclass(frozen=True)
class Timed:
    name: str
    executable: str
    package: str
    what: str
    prepare: object  # (work folder, scale) -> study_programs.Invocation
    outputs: tuple[str, ...] = ()  # files of the work folder the run writes, checked with stdout
    threads: int = 1
    in_means: bool = True  # start-up is a criterion of its own, not one of the programs


# ---- inputs of the programs the replay study does not have ---------------------------------

def _prepare_sort_parallel(work: str, scale: float) -> sp.Invocation:
    """Lines of random words and numbers sorted in memory by two threads."""
    src = "lines.txt"
    rng = random.Random(2)
    with open(os.path.join(work, src), "w") as f:
        for i in range(sp._scaled(1500000, scale)):
            f.write(f"{'w' * rng.randrange(1, 40)}{i} {rng.randrange(10 ** 6)} "
                    f"{'z' * rng.randrange(0, 60)}\n")
    return sp.Invocation(["sort", "--parallel=2", "-S", "256M", "-k2,2n", "-k1,1", src,
                          "-o", "sorted.txt"], inputs=[src])


def _prepare_xz_threads(work: str, scale: float) -> sp.Invocation:
    """One file of generated text compressed by two threads (blocks of 1 MiB)."""
    rng = random.Random(3)
    words = ["alloc", "free", "block", "heap", "page", "fit", "buddy", "slab", "list", "tree"]
    with open(os.path.join(work, "big.txt"), "w") as f:
        for _ in range(sp._scaled(80000, scale)):
            f.write(" ".join(rng.choice(words) for _ in range(rng.randrange(3, 12))) + "\n")
    return sp.Invocation(["xz", "-T2", "--block-size=1MiB", "-6", "-k", "-f", "big.txt"],
                         inputs=["big.txt"])


def _prepare_mawk(work: str, scale: float) -> sp.Invocation:
    return sp._prepare_awk(work, scale * 10, awk="mawk")


def _prepare_diff(work: str, scale: float) -> sp.Invocation:
    """diff of two files of generated lines, the second with a tenth of its lines changed."""
    lines = sp._scaled(1200000, scale)
    sp._words_file(work, "a.txt", lines, 5)
    rng = random.Random(6)
    with open(os.path.join(work, "a.txt")) as f, open(os.path.join(work, "b.txt"), "w") as g:
        for line in f:
            g.write(f"changed {rng.randrange(10 ** 6)}\n" if rng.randrange(10) == 0 else line)
    return sp.Invocation(["diff", "a.txt", "b.txt"], inputs=["a.txt", "b.txt"])


def _prepare_bc(work: str, scale: float) -> sp.Invocation:
    """bc computing digits of pi and e: numbers of thousands of digits made and dropped."""
    digits = sp._scaled(1200, scale)
    with open(os.path.join(work, "digits.bc"), "w") as f:
        f.write(f"scale = {digits}\n4 * a(1)\ne(1)\nquit\n")
    return sp.Invocation(["bc", "-l", "digits.bc"], inputs=["digits.bc"])


def _prepare_gxx_templates(work: str, scale: float) -> sp.Invocation:
    """g++ on the replay study's generated C++ file, with 4 times its classes."""
    with open(os.path.join(work, "generated.cc"), "w") as f:
        f.write(sp.cpp_source(sp._scaled(12, scale)))
    return sp.Invocation(["g++", "-std=c++17", "-O1", "-c", "generated.cc", "-o", "generated.o"],
                         inputs=["generated.cc"])


def _prepare_startup(work: str, scale: float) -> sp.Invocation:
    """A shell starting `env /bin/true` over and over (two processes each, all preloaded): what
    an allocator adds to a process that does nothing (issue 38: within 5 % of no preload)."""
    runs = sp._scaled(1000, scale)
    return sp.Invocation(["sh", "-c", f'i=0; while [ $i -lt {runs} ]; do env /bin/true; '
                          'i=$((i + 1)); done'])


def _scaled_prepare(prepare, factor: float):
    """A replay-study program's prepare at `factor` times the timed study's scale: its inputs
    are sized for tracing, far shorter than a timed run should be."""
    return lambda work, scale: prepare(work, scale * factor)


def _git_with_marks(work: str, scale: float) -> sp.Invocation:
    """The repository is made by each run: one made once was kept from run to run (a folder of
    the prepared work folder), and every import but the first found its objects there, a
    tenth of the work, so that the first run's allocator took ten times the others' time."""
    inv = sp._prepare_git(work, scale * 10)
    shutil.rmtree(os.path.join(work, "repo.git"), ignore_errors=True)
    inv.argv = ["sh", "-c", 'git init -q --bare repo.git && exec "$@" --export-marks=../marks.txt',
                "sh", *inv.argv]
    return inv


PROGRAMS = [
    Timed("python3", "/usr/bin/python3", "python3", "dicts of lists of strings built and dropped",
          _scaled_prepare(sp._prepare_python, 19)),
    Timed("sqlite3", "sqlite3", "sqlite3", "a database built, indexed, queried",
          _scaled_prepare(sp._prepare_sqlite, 7)),
    Timed("gcc", "gcc", "gcc", "gcc -O2 -c of a generated C file",
          _scaled_prepare(sp._prepare_gcc, 3), outputs=("generated.o",)),
    Timed("g++", "g++", "g++", "g++ -O1 -c of a template-heavy generated C++ file (maps, "
          "vectors, unique_ptrs, lambdas)", _prepare_gxx_templates, outputs=("generated.o",)),
    Timed("perl", "perl", "perl-base", "hashes of arrays of strings built and dropped",
          _scaled_prepare(sp._prepare_perl, 9)),
    Timed("git", "git", "git", "git fast-import of a generated history",
          _git_with_marks, outputs=("marks.txt",)),
    Timed("sort", "sort", "coreutils", "sort with a 1 MiB buffer: runs in temporary files, merged",
          _scaled_prepare(sp._prepare_sort, 20), outputs=("sorted.txt",)),
    Timed("sort-parallel", "sort", "coreutils", "sort --parallel=2 in memory (two threads)",
          _prepare_sort_parallel, outputs=("sorted.txt",), threads=2),
    Timed("xz-threads", "xz", "xz-utils", "xz -T2 -6 of one generated file (two threads)",
          _prepare_xz_threads, outputs=("big.txt.xz",), threads=2),
    Timed("awk", "mawk", "mawk", "awk (mawk) counting words in an associative array",
          _prepare_mawk),
    Timed("diff", "diff", "diffutils", "diff of two files of generated lines", _prepare_diff),
    Timed("jq", "jq", "jq", "jq grouping and summing a JSON array of records",
          _scaled_prepare(sp._prepare_jq, 15)),
    Timed("bc", "bc", "bc", "bc computing thousands of digits of pi and e", _prepare_bc),
    Timed("startup", "sh", "dash", "start-up: `env /bin/true` run over and over by a shell",
          _prepare_startup, in_means=False),
]
NAMES = [p.name for p in PROGRAMS]


# ---- one run ----------------------------------------------------------------------------------

@dataclass
class Run:
    program: str
    allocator: str
    round: int
    position: int  # in its round's order
    rc: int
    wall_s: float
    cpu_s: float
    peak_kib: int
    digest: str
    error: str = ""


def _digest(stdout: bytes, work: str, outputs: tuple[str, ...]) -> str:
    h = hashlib.sha256(stdout)
    for name in outputs:
        path = os.path.join(work, name)
        h.update(name.encode())
        if os.path.isfile(path):
            with open(path, "rb") as f:
                h.update(f.read())
        else:
            h.update(b"(missing)")
    return h.hexdigest()[:16]


def run_once(program: Timed, inv: sp.Invocation, alloc: al.Allocator, work: str,
             base_env: dict[str, str], round_: int, position: int, prepared: set[str]) -> Run:
    """Run the program once under `alloc`, in a work folder holding only its inputs. CPU time
    and peak RSS from GNU time (the program and the children it waited for: gcc's cc1, as);
    not from this Python's own wait4, whose child would carry our RSS across its exec."""
    for name in set(os.listdir(work)) - prepared:
        path = os.path.join(work, name)
        shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
    env = {**base_env, **inv.env, **alloc.env}
    if alloc.preload:
        env["LD_PRELOAD"] = alloc.preload
    out_path = os.path.join(work, ".stdout")
    time_path = os.path.join(work, ".time")
    argv = [TIME, "-f", "%U %S %M", "-o", time_path, *inv.argv]
    t0 = time.perf_counter()
    with open(os.path.join(work, inv.stdin) if inv.stdin else os.devnull, "rb") as inp, \
            open(out_path, "wb") as out:
        proc = subprocess.Popen(argv, env=env, cwd=work, stdin=inp, stdout=out,
                                stderr=subprocess.PIPE, start_new_session=True)
        try:
            _, err = proc.communicate(timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            _, err = proc.communicate()
    wall = time.perf_counter() - t0
    with open(out_path, "rb") as f:
        stdout = f.read()
    try:
        with open(time_path) as f:
            user, system, peak = f.read().split()[-3:]
        cpu, peak_kib = float(user) + float(system), int(peak)
    except (OSError, ValueError):
        cpu, peak_kib = 0.0, 0
    rc = proc.returncode
    # diff exits with 1 when the files differ, as they do here.
    ok = rc == 0 or (program.name == "diff" and rc == 1)
    text = err.decode(errors="replace")
    last = next((line for line in reversed(text.strip().splitlines())
                 if line.strip() and not line.startswith("Command exited")), "")
    return Run(program.name, alloc.name, round_, position, rc, wall, cpu, peak_kib,
               _digest(stdout, work, program.outputs),
               "" if ok else f"exit {rc}" + (f": {last.strip()}" if last else ""))


# ---- the study ----------------------------------------------------------------------------------

def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def median(values: list[float]) -> float:
    s = sorted(values)
    n = len(s)
    return (s[n // 2] + s[(n - 1) // 2]) / 2 if n else float("nan")


def order(allocs: list, seed: int, program: str, round_: int) -> list:
    """The allocators' order in one round of a program: shuffled from the seed, the program's name
    and the round, so that no allocator always runs right after the same one, and a subset of
    the programs runs in the same orders."""
    shuffled = list(allocs)
    random.Random(f"{seed} {program} {round_}").shuffle(shuffled)
    return shuffled


def paired(runs: list[dict], allocator: str, key: str) -> float:
    """The median over rounds of `allocator`'s run of one program against glibc's run of the same
    round (`key` wall_s or cpu_s). A round runs every allocator back to back, so a pair shares
    the machine's state, which moves far more between minutes than between neighbouring runs.
    Rounds where either run failed or measured 0 are left out; nan if none is left."""
    ref = {r["round"]: r[key] for r in runs
           if r["allocator"] == "glibc" and not r["error"] and r[key] > 0}
    return median([r[key] / ref[r["round"]] for r in runs
                   if r["allocator"] == allocator and not r["error"] and r[key] > 0
                   and r["round"] in ref])


KEYS = (("wall_s", "time"), ("cpu_s", "CPU time"), ("peak_kib", "peak RSS"))
MEASURES = tuple(k for k, _ in KEYS)
PAIRED = ("wall_s", "cpu_s")


def run(out_dir: str, allocs: list[al.Allocator], programs: list[Timed], scale: float,
        rounds: int, log, seed: int = SEED) -> dict:
    """Every program under every allocator, `rounds` times, interleaved; the document of
    programs.json (runs, medians, ratios against glibc, failures, programs not run)."""
    root = os.path.join(out_dir, "programs")
    os.makedirs(root, exist_ok=True)
    base_env = {k: v for k, v in os.environ.items()
                if k != "LD_PRELOAD" and not k.startswith(("FITALLOC_", "PYTHON"))}
    base_env["LC_ALL"] = "C"
    doc: dict = {"scale": scale, "rounds": rounds, "seed": seed,
                 "allocators": [a.name for a in allocs],
                 "programs": [], "missing": [], "failures": [], "runs": []}
    for program in programs:
        path = program.executable if os.path.isabs(program.executable) \
            else shutil.which(program.executable)
        if not path or not os.access(path, os.X_OK):
            msg = (f"{program.name}: not run: {program.executable} is not installed "
                   f"(Debian package {program.package})")
            log(msg)
            doc["missing"].append(msg)
            continue
        work = os.path.join(root, program.name)
        os.makedirs(work, exist_ok=True)
        inv = program.prepare(work, scale)
        prepared = set(os.listdir(work))
        log(f"programs: {program.name}: {' '.join(inv.argv)[:100]}")
        runs: list[Run] = []
        for r in range(rounds):
            for pos, alloc in enumerate(order(allocs, seed, program.name, r)):
                runs.append(run_once(program, inv, alloc, work, base_env, r, pos, prepared))
        expected = {run.digest for run in runs if run.allocator == "glibc" and not run.error}
        for run in runs:
            if not run.error and expected and run.digest not in expected:
                run.error = "output differs from glibc's"
            if run.error:
                doc["failures"].append(f"{program.name} under {run.allocator} (round "
                                       f"{run.round + 1}): {run.error}")
        doc["runs"] += [run.__dict__ for run in runs]
        doc["programs"].append(aggregate(program, inv, [run.__dict__ for run in runs], allocs))
    doc["geomean"] = _geomeans(doc, "ratios")
    doc["geomean_of_medians"] = _geomeans(doc, "ratios_of_medians")
    with open(os.path.join(root, "programs.json"), "w") as f:
        json.dump(doc, f, indent=1)
    return doc


def aggregate(program: Timed, inv: sp.Invocation, runs: list[dict], allocs) -> dict:
    """One program's row: per allocator the medians of its clean runs; its ratios to glibc
    (time and CPU time paired round by round, peak RSS the ratio of the medians); and, as the
    study printed them before, time and CPU time as the ratio of the medians."""
    row = {"name": program.name, "what": program.what, "threads": program.threads,
           "in_means": program.in_means, "command": " ".join(inv.argv), "allocators": {},
           "ratios": {}, "ratios_of_medians": {}}
    for alloc in allocs:
        mine = [x for x in runs if x["allocator"] == alloc.name and not x["error"]]
        if mine:
            row["allocators"][alloc.name] = {k: median([x[k] for x in mine]) for k in MEASURES}
    ref = row["allocators"].get("glibc")
    for name, mine in (row["allocators"].items() if ref else ()):
        of_medians = {k: mine[k] / ref[k] for k in MEASURES if ref[k] > 0 and mine[k] > 0}
        ratios = {k: paired(runs, name, k) for k in PAIRED}
        ratios = {k: v for k, v in ratios.items() if not math.isnan(v)}
        if "peak_kib" in of_medians:
            ratios["peak_kib"] = of_medians["peak_kib"]
        row["ratios"][name] = ratios
        row["ratios_of_medians"][name] = {k: v for k, v in of_medians.items() if k in PAIRED}
    return row


def _geomeans(doc: dict, field: str) -> dict:
    """Per allocator, the geometric means over the programs (start-up apart) of a row's ratios
    against glibc's (`field`: ratios, or ratios_of_medians)."""
    out = {}
    for name in doc["allocators"]:
        ratios: dict[str, list[float]] = {}
        for row in doc["programs"]:
            if row.get("in_means", True):
                for k, v in row[field].get(name, {}).items():
                    ratios.setdefault(k, []).append(v)
        out[name] = {k: geomean(v) for k, v in ratios.items()}
    return out


def _cell(ratios: dict, keys) -> str:
    return " / ".join(f"{ratios[k]:.2f}" if k in ratios else "-" for k in keys)


def _mean_cell(gm: dict, keys) -> str:
    return " / ".join(f"{gm[k]:.3f}" if k in gm else "-" for k in keys)


def table(doc: dict) -> list[str]:
    """The report's section: one row per program (time / CPU / peak RSS against glibc), the
    geometric means, then what failed and what was not run; then time and CPU time as the ratio
    of the medians, for comparison."""
    names = doc["allocators"]
    lines = [f"## Real programs, timed (scale {doc['scale']:g}, {doc['rounds']} interleaved "
             f"rounds, order shuffled from seed {doc.get('seed', '-')})", "",
             "Each cell: time / CPU time / peak RSS, against glibc's (glibc's own cell: "
             "medians in seconds / seconds / MiB). Time and CPU time are paired: the median over "
             "rounds of each round's ratio to glibc's run in the same round; peak RSS is the "
             "ratio of the medians. Lower is better.", "",
             "| program | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for row in doc["programs"]:
        cells = []
        for name in names:
            mine = row["allocators"].get(name)
            if not mine:
                cells.append("FAILED")
            elif name == "glibc" or name not in row["ratios"]:
                cells.append(f"{mine['wall_s']:.2f} / {mine['cpu_s']:.2f} / "
                             f"{mine['peak_kib'] / 1024:.1f}")
            else:
                cells.append(_cell(row["ratios"][name], MEASURES))
        lines.append(f"| {row['name']} | " + " | ".join(cells) + " |")
    gm = doc["geomean"]
    lines.append("| **geometric mean** (start-up apart) | " +
                 " | ".join(_mean_cell(gm[n], MEASURES) for n in names) + " |")
    lines.append("")
    lines += summary(doc)
    for f in doc["failures"]:
        lines.append(f"- FAILED: {f}")
    for m in doc["missing"]:
        lines.append(f"- {m}")
    others = [n for n in names if n != "glibc"]
    lines += ["", "Time / CPU time as the ratio of the medians over rounds (unpaired, as the study "
              "reported them before; moved by the machine's state between rounds):", "",
              "| program | " + " | ".join(others) + " |", "|---|" + "---|" * len(others)]
    for row in doc["programs"]:
        lines.append(f"| {row['name']} | " + " | ".join(
            _cell(row["ratios_of_medians"].get(n, {}), PAIRED) for n in others) + " |")
    lines.append("| **geometric mean** (start-up apart) | " + " | ".join(
        _mean_cell(doc["geomean_of_medians"][n], PAIRED) for n in others) + " |")
    lines.append("")
    return lines


def summary(doc: dict) -> list[str]:
    """The study in a few lines: each allocator's geometric means against glibc's, fitalloc's
    against the best peer's, the programs where fitalloc is more than 3 % slower than glibc, and
    start-up against no preload (issue 38's criteria); time and CPU time paired."""
    gm, names = doc["geomean"], doc["allocators"]
    counted = [r for r in doc["programs"] if r.get("in_means", True)]
    lines = [f"Geometric means over {len(counted)} programs, against glibc (time / CPU time / "
             "peak RSS; time and CPU time paired by round):", ""]
    for n in names:
        lines.append(f"- {n}: " + _mean_cell(gm[n], MEASURES))
    peers = [n for n in names if n not in ("glibc", *al.FITALLOC_VARIANTS)]
    if "fitalloc" in names:
        lines.append("")
        for k, what in KEYS:
            have = [n for n in peers + ["glibc"] if k in gm[n]]
            if k not in gm["fitalloc"] or not have:
                continue
            best = min(have, key=lambda n: gm[n][k])
            lines.append(f"- fitalloc's {what}: {gm['fitalloc'][k] / gm[best][k]:.3f} times "
                         f"the best peer's ({best})")
        slower = [f"{row['name']} {row['ratios']['fitalloc']['wall_s']:.2f}" for row in counted
                  if row["ratios"].get("fitalloc", {}).get("wall_s", 0) > 1.03]
        lines.append("- programs where fitalloc takes more than 1.03 times glibc's time: " +
                     (", ".join(slower) if slower else "none"))
        for row in doc["programs"]:
            mine = row["ratios"].get("fitalloc")
            if not row.get("in_means", True) and mine:
                lines.append(f"- {row['name']} (against no preload): " +
                             _cell(mine, MEASURES))
    lines.append("")
    return lines


COMMAND = "bash tools/bench.sh --study programs"


def main(args, ap, log, fitalloc_snapshot) -> int:
    """--study programs: the timed study alone; report.md is its table."""
    if not args.results:
        ap.error("--study programs needs --results (tools/bench.sh gives one)")
    try:
        programs = sp.select(args.study_programs, PROGRAMS)
    except ValueError as e:
        ap.error(str(e))
    wanted = [n for n in (args.alloc.split(",") if args.alloc else
                          ["fitalloc", "mimalloc", "jemalloc", "tcmalloc", "scudo", "glibc"])
              if n.strip()]
    if "glibc" not in wanted:
        wanted.append("glibc")  # every output is checked against glibc's
    allocs, missing = al.discover_peers(wanted, args.fitalloc, args.build_dir)
    for m in missing:
        log(m)
    allocs = [al.Allocator(a.name, fitalloc_snapshot(), a.env)
              if a.name in al.FITALLOC_VARIANTS else a for a in allocs]
    out_dir = os.path.abspath(args.results)
    t0 = time.perf_counter()
    doc = run(out_dir, allocs, programs, args.study_scale or DEFAULT_SCALE, args.reps, log)
    lines = table(doc) + [f"- allocator {m}" for m in missing]
    lines.append("")
    lines.append(f"`{COMMAND}`, {time.perf_counter() - t0:.0f} s; files in programs/.")
    with open(os.path.join(out_dir, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    for f in doc["failures"]:
        print(f"programs study FAILED: {f}")
    return 1 if doc["failures"] else 0

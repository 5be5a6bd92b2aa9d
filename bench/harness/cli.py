"""The command line of the bench (bench/compare.py, and tools/bench.sh around it)."""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import shlex
import shutil
import sys
import tempfile
import time

from . import allocators as al
from . import frag_study, losses, machine_load, pathologies, plots, programs_timed, redis_study
from . import replay_study, report, results, server_study, studies
from . import study_programs
from . import study_report, summary, table
from .build import BuildError, build
from .paths import DEFAULT_BUILD_DIR, DEFAULT_FITALLOC
from .progress import Progress, fmt_duration
from .runner import Run, run_one
from .schedule import plan
from .workloads import SIZES, all_workloads, cases, select

TIMEOUTS = {"smoke": 60.0, "real": 300.0, "full": 1800.0}


def log(msg: str = "") -> None:
    print(msg, file=sys.stderr, flush=True)


def parse_args(argv: list[str] | None) -> tuple[argparse.Namespace, argparse.ArgumentParser]:
    ap = argparse.ArgumentParser(
        prog="compare.py",
        description="Run the bench workloads under fitalloc, its lab configurations and the "
                    "other allocators, interleaved and repeated; print medians and ratios; "
                    "with --results, write CSV/JSON, report.md and plots. See docs/bench.md.")
    ap.add_argument("-w", "--workload", default=None,
                    help="comma list of workloads or groups (default: every non-test workload)")
    ap.add_argument("-a", "--alloc", default=None,
                    help="comma list of allocators: " + ", ".join(al.valid_names())
                         + " ('lab': each workload's own lab configurations; a lab "
                           "configuration named here runs on every selected workload). "
                           "Default: every peer found, plus each workload's lab configurations")
    ap.add_argument("-r", "--reps", type=int, default=5, help="repetitions (default 5)")
    ap.add_argument("-s", "--size", choices=SIZES, default="smoke",
                    help="workload size (default smoke; full: the studies' original sizes)")
    ap.add_argument("--full", dest="size", action="store_const", const="full",
                    help="same as --size full")
    ap.add_argument("--threads", default=None,
                    help="comma list of thread counts for the sweeps (default 1,2,4,8,16,32)")
    ap.add_argument("--fitalloc", default=DEFAULT_FITALLOC,
                    help=f"libfitalloc.so to use (default {DEFAULT_FITALLOC})")
    ap.add_argument("--baseline", default=None, metavar="PATH",
                    help="another libfitalloc.so (a build of main, say), run as "
                         "fitalloc-baseline in the same interleaved runs: a change against the "
                         "code it changes, in one run (--ref fitalloc-baseline gives the ratios "
                         "against it); with fitalloc-secure, fitalloc-secure-baseline too")
    ap.add_argument("--build-dir", default=DEFAULT_BUILD_DIR,
                    help=f"where the workloads are built (default {DEFAULT_BUILD_DIR})")
    ap.add_argument("--results", default=None,
                    help="write runs.csv, figures.csv, runs.json, summary.json, report.md and "
                         "plots/*.png into this directory")
    ap.add_argument("-o", "--out", default=None, help="also write every run to this CSV file")
    ap.add_argument("--ref", default="mimalloc",
                    help="allocator the ratios are relative to (default mimalloc; glibc when "
                         "it is not in the run)")
    ap.add_argument("--timeout", type=float, default=None,
                    help="seconds before a run is killed and FAILED (default 60 smoke, 300 real, "
                         "1800 full)")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"), help="C compiler (default $CC or cc)")
    ap.add_argument("--no-plots", action="store_true", help="do not draw plots")
    ap.add_argument("--build-only", action="store_true", help="build the workloads, then exit")
    ap.add_argument("--list", action="store_true", help="list the workloads and allocators")
    ap.add_argument("--no-study", action="store_true",
                    help="do not run the replay study (real programs traced and replayed under "
                         "every policy after the timed runs; default: on with the default suite "
                         "and --results)")
    ap.add_argument("--study", nargs="?", const="replay",
                    choices=["replay", "fragmentation", "programs", "server"],
                    help="replay (the default with no value): run the replay study even with "
                         "-w (it runs with the default suite); fragmentation: run only the "
                         "fragmentation study, every program at scale "
                         f"{replay_study.SCALES['fragmentation']:g}, with its plot, no timed "
                         "runs; programs: only the timed real-program study (-a, -r, "
                         "--study-programs of " + ", ".join(programs_timed.NAMES) + ", "
                         "--study-scale); server: only the churning-server study (-a, -r, "
                         "--size)")
    ap.add_argument("--study-programs", default=None, metavar="LIST",
                    help="the study's programs: all (default) or a comma list of "
                         + ", ".join(study_programs.NAMES) + " (implies --study)")
    ap.add_argument("--study-scale", type=float, default=None, metavar="X",
                    help="scale of the study's inputs (default: 1 at the smoke size, "
                         f"{replay_study.SCALES['real']:g} at real and full)")
    ap.add_argument("--replay", default=None, metavar="PATH",
                    help="fitalloc-replay for the study (default: beside --fitalloc, built "
                         "there first when it is a CMake build folder)")
    ap.add_argument("--redis", action="store_true",
                    help="run the Redis study (Mesh's LRU experiment, docs/bench.md) at the "
                         "paper's size with the bench's repetitions, even with -w (default: "
                         f"at scale {redis_study.SHORT_SCALE:g}, one repetition, with the "
                         "default suite and --results)")
    ap.add_argument("--no-redis", action="store_true", help="do not run the Redis study")
    ap.add_argument("--redis-scale", type=float, default=None, metavar="X",
                    help="scale of the Redis study's keys and maxmemory (1: 700,000 + "
                         "170,000 keys, 100 MB; implies --redis)")
    ap.add_argument("--redis-reps", type=int, default=None, metavar="N",
                    help="repetitions of the Redis study (default: -r with --redis, 1 in the "
                         "default suite)")
    ap.add_argument("--list-allocs", action="store_true",
                    help="print 'name<TAB>preload' for each peer found ('-' for glibc) and exit")
    return ap.parse_args(argv), ap


def parse_allocs(text: str | None, ap: argparse.ArgumentParser) -> tuple[list[str], list[str], bool]:
    """(peers, explicit lab configurations, run each workload's own lab configurations)."""
    if text is None:
        return list(al.PEER_NAMES), [], True
    peers, labs, own_labs = [], [], False
    for token in (t.strip() for t in text.split(",")):
        if not token:
            continue
        if token in al.PEER_NAMES or token in al.OPTIONAL_NAMES:
            if token not in peers:
                peers.append(token)
        elif token in al.LAB_CONFIGS:
            if token not in labs:
                labs.append(token)
        elif token == "lab":
            own_labs = True
        else:
            ap.error(f"unknown allocator '{token}'; valid: {', '.join(al.valid_names())}")
    if not (peers or labs or own_labs):
        ap.error(f"empty allocator list; valid: {', '.join(al.valid_names())}")
    return peers, labs, own_labs


def list_everything(fitalloc: str) -> None:
    print("workloads (-w):")
    for w in all_workloads():
        extra = f"  [labs: {', '.join(w.labs)}]" if w.labs else ""
        sweep = f"  [threads {','.join(map(str, w.sweep))}]" if w.sweep else ""
        only = f"  [not in the default suite: -w {w.group or w.name}]" if not w.default else ""
        print(f"  {w.name:<18} {w.kind:<8} {w.summary}{extra}{sweep}{only}")
    print("\nallocators (-a):")
    found, missing = al.discover_peers(al.PEER_NAMES + al.OPTIONAL_NAMES, fitalloc)
    for a in found:
        print(f"  {a.name:<18} {a.preload or '(no preload)'}")
    for m in missing:
        print(f"  {m}")
    for name, (what, _) in al.LAB_CONFIGS.items():
        env = al.lab_allocator(name, fitalloc).env_text
        print(f"  {name:<18} {what}: {env}")


def snapshot(build_dir: str, path: str, name: str = "fitalloc") -> str:
    """Run a private copy of libfitalloc.so, so that a rebuild during the bench cannot mix two
    versions (or hit a half-written file)."""
    src = os.path.realpath(path)
    snap = os.path.join(build_dir, f"lib{name}.snapshot.so")
    shutil.copy2(src, snap)
    with open(snap, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:12]
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(os.path.getmtime(src)))
    log(f"{name}: using a snapshot of {src} (sha256 {digest}, modified {stamp})")
    return snap


def machine() -> str:
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f
                          if line.startswith("model name")), "")
    except OSError:
        pass
    return f"{os.cpu_count()} cores {model}, Linux {platform.release()}, Python {platform.python_version()}"


def main(argv: list[str] | None = None) -> int:
    args, ap = parse_args(argv)
    if args.reps < 1:
        ap.error("--reps must be >= 1")
    if args.list:
        list_everything(args.fitalloc)
        return 0
    if args.study == "programs":
        build_dir = os.path.abspath(args.build_dir)
        os.makedirs(build_dir, exist_ok=True)
        return programs_timed.main(args, ap, log, lambda: snapshot(build_dir, args.fitalloc))
    if args.study == "server":
        build_dir = os.path.abspath(args.build_dir)
        os.makedirs(build_dir, exist_ok=True)
        return server_study.main(args, ap, log, lambda: snapshot(build_dir, args.fitalloc))
    workloads = all_workloads()
    try:
        selected = select(args.workload, workloads)
    except ValueError as e:
        ap.error(str(e))
    sweep = None
    if args.threads:
        try:
            sweep = tuple(int(t) for t in args.threads.split(",") if t.strip())
        except ValueError:
            ap.error("--threads needs a comma list of integers")
        if not sweep or min(sweep) < 1:
            ap.error("--threads needs positive integers")
    peer_names, lab_names, own_labs = parse_allocs(args.alloc, ap)
    if args.baseline is not None and not os.path.isfile(args.baseline):
        ap.error(f"--baseline: no file {args.baseline}")
    try:
        study_list = study_programs.select(args.study_programs)
    except ValueError as e:
        ap.error(str(e))
    if args.study_scale is not None and not args.study_scale > 0:
        ap.error("--study-scale needs a positive number")
    if args.redis_scale is not None and not args.redis_scale > 0:
        ap.error("--redis-scale needs a positive number")
    if args.redis_reps is not None and args.redis_reps < 1:
        ap.error("--redis-reps must be >= 1")
    if args.study == "fragmentation":
        return fragmentation_study(args, ap, study_list)
    build_dir = os.path.abspath(args.build_dir)
    timeout = args.timeout or TIMEOUTS[args.size]
    notes: list[str] = []

    peers, missing = al.discover_peers(peer_names, args.fitalloc, build_dir)
    for m in missing:
        log(m + ("" if args.alloc else "; going on without it"))
        notes.append(m)
    if args.list_allocs:  # name, preload, settings: for bench/callgrind_pair.sh
        labs = [al.lab_allocator(n, os.path.abspath(args.fitalloc)) for n in lab_names]
        for a in peers + labs:
            print(f"{a.name}\t{a.preload or '-'}\t{a.env_text}")
        return 0 if peers or labs else 1

    try:
        build(build_dir, args.cc)
    except BuildError as e:
        log(str(e))
        return 2
    if args.build_only:
        log(f"built into {build_dir}")
        return 0

    fitalloc_path = None
    if any(a.name in al.FITALLOC_VARIANTS for a in peers) or lab_names or own_labs:
        if os.path.isfile(args.fitalloc):
            fitalloc_path = snapshot(build_dir, args.fitalloc)
        elif lab_names or own_labs:
            notes.append("lab configurations skipped: " + al.missing_message("fitalloc", args.fitalloc))
    usable = []
    for a in peers:
        if a.name == "fitalloc-secure" and fitalloc_path:
            a = al.Allocator(a.name, snapshot(build_dir, al.secure_library(args.fitalloc), a.name),
                             a.env)
        elif a.name in al.FITALLOC_VARIANTS:
            a = al.Allocator(a.name, fitalloc_path, a.env)
        problem = al.check_preload(build_dir, a)
        if problem is None:
            usable.append(a)
        elif "did not take effect" in problem:
            log(f"{a.name}: UNUSABLE: {problem}; going on without it")
            notes.append(f"{a.name}: unusable: {problem}")
        else:  # it loads but misbehaves: keep it so that its runs show as FAILED
            log(f"{a.name}: WARNING: preload probe failed ({problem}); its runs will likely fail")
            usable.append(a)
    if args.baseline:
        baseline = al.Allocator(al.BASELINE, snapshot(build_dir, args.baseline, al.BASELINE))
        problem = al.check_preload(build_dir, baseline)
        if problem is not None:
            log(f"--baseline {args.baseline}: {problem}")
            return 2
        usable.append(baseline)
        if any(a.name == "fitalloc-secure" for a in usable):
            secure = al.secure_library(args.baseline)
            if secure:
                usable.append(al.Allocator(al.BASELINE_SECURE,
                                           snapshot(build_dir, secure, al.BASELINE_SECURE),
                                           al.FITALLOC_VARIANTS["fitalloc-secure"]))
            else:
                notes.append(f"{al.BASELINE_SECURE}: no secure library beside {args.baseline}")

    case_list = cases(selected, sweep)
    wanted_labs = list(dict.fromkeys(
        lab_names + [lab for c in case_list for lab in c.workload.labs if own_labs]))
    labs: dict[str, al.Allocator] = {}
    if fitalloc_path:
        for name in wanted_labs:
            a = al.lab_allocator(name, fitalloc_path)
            if al.lab_active(build_dir, a):
                labs[name] = a
        inactive = [n for n in wanted_labs if n not in labs]
        if inactive:
            msg = (f"{', '.join(inactive)}: UNAVAILABLE: the policy lab does not run in "
                   f"{args.fitalloc} (fa_lab_stats_get missing or -1: FITALLOC_MODE=lab falls "
                   "back to the fast engine); skipped")
            log(msg)
            notes.append(msg)

    allocs_of: dict[str, list[al.Allocator]] = {}
    for c in case_list:
        own = [labs[n] for n in c.workload.labs if own_labs and n in labs]
        extra = [labs[n] for n in lab_names if n in labs and labs[n] not in own]
        allocs_of[c.id] = [a for a in usable if (a.name, c.id) not in pathologies.NOT_RUN]
        allocs_of[c.id] += own + extra
    for name, case in sorted(pathologies.NOT_RUN):
        if case in allocs_of and name in [a.name for a in usable]:
            msg = (f"{name} on {case}: not run ({pathologies.PATHOLOGIES[(name, case)]})")
            log(msg)
            notes.append(msg)
    all_allocs = list(dict.fromkeys(a for aa in allocs_of.values() for a in aa))
    if not all_allocs:
        log("no allocator to run")
        return 2
    names = [a.name for a in all_allocs]
    ref = args.ref
    if ref not in [a.name for a in usable]:
        fallback = "glibc" if "glibc" in names else names[0]
        log(f"reference '{ref}' is not in this run; ratios are relative to {fallback}")
        notes.append(f"reference {ref} not in this run: ratios are relative to {fallback}")
        ref = fallback
    for a in all_allocs:
        log(f"{a.name:<18} {a.preload or '(no preload)'} {a.env_text}")
    study_tools, study_skipped = None, study_off_reason(args)
    study_wanted = study_skipped is None
    study_failed: list[str] = []
    if study_wanted:  # the tools found (and fitalloc-replay built) before the timed runs
        study_tools, study_skipped = replay_study.locate(
            args.fitalloc, fitalloc_path or os.path.abspath(args.fitalloc), args.replay, log)
    if study_skipped:
        log(study_skipped)
        notes.append(study_skipped)
    redis_tools, redis_skipped = None, redis_off_reason(args)
    redis_wanted = redis_skipped is None
    redis_failed: list[str] = []
    if redis_wanted:
        redis_tools, redis_skipped = redis_study.locate()
    if redis_skipped:
        log(redis_skipped)
        if redis_wanted:
            notes.append(redis_skipped)

    slots = plan(case_list, allocs_of, args.reps)
    log(f"{len(slots)} runs: {len(case_list)} cases, size {args.size}, {args.reps} reps")
    progress = Progress(slots)
    runs: list[Run] = []
    started = time.strftime("%Y-%m-%d %H:%M:%S")
    t0 = time.perf_counter()
    load_before = machine_load.start()
    # WHY: a run that timed out would time out again; its other repetitions are FAILED
    # without running (scudo's realloc alone would otherwise take 3 x the timeout).
    timed_out: dict[tuple[str, str], int] = {}  # (case, allocator) -> repetition, from 1
    with tempfile.TemporaryDirectory(prefix="fitalloc-bench-") as tmp:
        for i, s in enumerate(slots, 1):
            run = Run(seq=i, rep=s.rep, case=s.case.id, workload=s.case.workload.name,
                      threads=s.case.threads, allocator=s.alloc.name, position=s.position)
            key = (s.case.id, s.alloc.name)
            if key in timed_out:
                run.status = "FAILED"
                run.note = f"not run: timed out in repetition {timed_out[key]}"
            else:
                run_one(build_dir, tmp, s.case, args.size, s.alloc, timeout, run)
                if run.note.startswith("timeout"):
                    timed_out[key] = s.rep + 1
            runs.append(run)
            progress.update(run)
    progress.finish()
    load = machine_load.finish(load_before)

    summary.check_checksums(runs)
    cells = summary.summarize(runs)
    case_ids = [c.id for c in case_list]
    names_of = {cid: [a.name for a in aa] for cid, aa in allocs_of.items()}
    # The points of a thread sweep are one curve, not separate workloads: keep them out of
    # the geometric means (and of time_rss.png), so that they do not outweigh the rest.
    mean_ids = [c.id for c in case_list if not c.sweep_point]
    overall = summary.overall(cells, mean_ids, names, ref)
    # The honest headline: the same means without the cases of a known pathology of one peer.
    found = pathologies.outliers(cells, mean_ids, [a.name for a in usable])
    left_out = pathologies.excluded_cases(found)
    overall_without = summary.overall(cells, [c for c in mean_ids if c not in left_out],
                                      names, ref) if left_out else None
    short = summary.short_cases(cells, case_ids, ref)
    table_lines = table.main_table(cells, case_ids, names_of, ref, short)
    overall_lines = table.overall_table(overall, ref, overall_without, found)
    ahead = losses.find(cells, case_ids, names_of)
    failed = [r for r in runs if not r.ok]
    print(f"size={args.size}, {args.reps} reps, interleaved; ratios are median/median vs {ref}\n")
    print("\n".join(table_lines))
    print("\n".join(overall_lines))
    if failed:
        print(f"\nFAILED runs ({len(failed)}):")
        for r in failed:
            print(f"  rep {r.rep + 1} {r.case}/{r.allocator}: {r.note}")
    for n in notes:
        print(f"note: {n}")

    if args.out:
        results.write_runs_csv(args.out, runs, args.size)
        log(f"raw runs written to {args.out}")
    if args.results:
        out_dir = os.path.abspath(args.results)
        meta = {"started": started, "command": shlex.join([sys.argv[0], *(argv or sys.argv[1:])]),
                "machine": machine(), "size": args.size, "reps": args.reps, "reference": ref,
                "runs": len(runs), "failed": len(failed),
                "duration": fmt_duration(time.perf_counter() - t0),
                "allocators": [{"name": a.name, "preload": a.preload, "env": a.env_text}
                               for a in all_allocs],
                "lab_available": bool(labs), "notes": notes, "load": load}
        results.write_all(out_dir, runs, args.size, meta, cells, case_ids, names_of, ref, overall,
                          overall_without, found, short)
        study_doc, frag_lines = None, None
        if study_tools is not None:  # after the timed runs: it must not disturb them
            scale = args.study_scale or replay_study.SCALES[args.size]
            study_doc = replay_study.run(out_dir, study_tools, study_list, scale,
                                         not args.no_plots, log)
            for e in study_doc["programs"]:
                if e["status"] == "missing":
                    notes.append(f"replay study: {e['name']} not studied: {e['note']}")
            study_failed = replay_study.failures(study_doc)
            print("\n".join(study_report.terminal_lines(study_doc)))
            frag_lines = frag_study.write(out_dir, study_doc, not args.no_plots, FRAG_COMMAND)
            print("\n".join(frag_study.terminal_lines(study_doc)))
        redis_doc = None
        if redis_tools is not None:  # after the timed runs, as the replay study
            scale, reps = redis_settings(args)
            redis_allocs = redis_study.study_allocators(usable, build_dir)
            redis_doc = redis_study.run(out_dir, redis_tools, redis_allocs, scale, reps,
                                        not args.no_plots, log)
            redis_failed = redis_study.failures(redis_doc)
            print("\n".join(redis_study.terminal_lines(redis_doc)))
        study_tables = studies.tables(cells, names_of)
        made, plot_notes = ([], ["--no-plots"]) if args.no_plots else plots.make_all(
            os.path.join(out_dir, "plots"), cells, case_ids, [a.name for a in usable], names_of,
            ref, studies.load(), mean_ids)
        report.write(os.path.join(out_dir, "report.md"), meta, overall_lines,
                     losses.section(ahead, short), table_lines, made, plot_notes, study_tables,
                     runs,
                     study_report.section(study_doc, study_skipped) if study_wanted else None,
                     study_failed, frag_lines,
                     redis_study.section(redis_doc, redis_skipped) if redis_wanted else None,
                     redis_failed)
        print(f"\nresults: {out_dir}/ (report.md, runs.csv, figures.csv, runs.json, "
              f"summary.json, plots/: {len(made)} PNG)")
    # WHY last: the first thing a reader sees when the bench ends, not buried in the table.
    print("\n".join(losses.terminal_lines(ahead)))
    print("\n".join(machine_load.terminal_lines(load)))
    for f in study_failed:
        print(f"replay study FAILED: {f}")
    for f in redis_failed:
        print(f"Redis study FAILED: {f}")
    return 1 if failed or study_failed or redis_failed else 0


FRAG_COMMAND = "bash tools/bench.sh --study fragmentation"


def fragmentation_study(args: argparse.Namespace, ap: argparse.ArgumentParser,
                        programs: list) -> int:
    """--study fragmentation: the replay study alone at the study's scale, then the
    fragmentation tables and plot; report.md holds the two sections."""
    if not args.results:
        ap.error("--study fragmentation needs --results (tools/bench.sh gives one)")
    if not os.path.isfile(args.fitalloc):
        ap.error(f"--study fragmentation: no library at {args.fitalloc}")
    started = time.strftime("%Y-%m-%d %H:%M:%S")
    t0 = time.perf_counter()
    build_dir = os.path.abspath(args.build_dir)
    os.makedirs(build_dir, exist_ok=True)
    tools, skipped = replay_study.locate(args.fitalloc, snapshot(build_dir, args.fitalloc),
                                         args.replay, log)
    if tools is None:
        log(skipped)
        return 2
    out_dir = os.path.abspath(args.results)
    scale = args.study_scale or replay_study.SCALES["fragmentation"]
    doc = replay_study.run(out_dir, tools, programs, scale, not args.no_plots, log)
    print("\n".join(study_report.terminal_lines(doc)))
    frag_lines = frag_study.write(out_dir, doc, not args.no_plots, FRAG_COMMAND)
    print("\n".join(frag_study.terminal_lines(doc)))
    failed = replay_study.failures(doc)
    meta = {"started": started, "command": shlex.join([sys.argv[0], *sys.argv[1:]]),
            "machine": machine(), "duration": fmt_duration(time.perf_counter() - t0)}
    report.write_study_only(os.path.join(out_dir, "report.md"), meta, frag_lines,
                            study_report.section(doc), failed)
    print(f"\nresults: {out_dir}/ (report.md, fragmentation/, replay/); "
          f"{meta['duration']}")
    for f in failed:
        print(f"replay study FAILED: {f}")
    return 1 if failed else 0


def _off_reason(args: argparse.Namespace, study: str, off: bool, off_option: str, asked: bool,
                ask_option: str) -> str | None:
    """Why `study` does not run, or None when it does: it belongs to the default suite's
    report; `off_option` turns it off; -w picks workloads only, unless `ask_option` asks for
    it too."""
    if off:
        return f"{study}: not run ({off_option})"
    if not args.results:
        return f"{study}: not run (it needs --results: its files go there)"
    if args.workload is not None and not asked:
        return f"{study}: not run (-w given; {ask_option} runs it too)"
    return None


def study_off_reason(args: argparse.Namespace) -> str | None:
    """Why the replay study does not run, or None (--study or --study-programs asks for it)."""
    return _off_reason(args, "replay study", args.no_study, "--no-study",
                       bool(args.study or args.study_programs), "--study")


def redis_off_reason(args: argparse.Namespace) -> str | None:
    """Why the Redis study does not run, or None (--redis or --redis-scale asks for it)."""
    return _off_reason(args, "Redis study", args.no_redis, "--no-redis",
                       bool(args.redis or args.redis_scale), "--redis")


def redis_settings(args: argparse.Namespace) -> tuple[float, int]:
    """(scale, repetitions): the paper's size and -r with --redis or --redis-scale; else the
    short version, one repetition (a quarter of the size: ~4 s a run)."""
    asked = args.redis or args.redis_scale is not None
    scale = args.redis_scale or (redis_study.FULL_SCALE if asked else redis_study.SHORT_SCALE)
    reps = args.redis_reps or (args.reps if asked else 1)
    return scale, reps

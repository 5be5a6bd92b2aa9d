#!/usr/bin/env python3
"""Compare fitalloc with other malloc implementations on the bench workloads.

Builds bench/workloads/*.c (cc -O2 -pthread) and the two helpers in
bench/support/ into the build dir, then runs every (workload, allocator) pair
R times, interleaved: for each repetition, for each workload, every allocator
once, in an order rotated by one place per repetition. Each run is one
process, under LD_PRELOAD=<allocator> (glibc: no preload). Per run it records
wall time (time.perf_counter around the run), user and system CPU time and
peak RSS (ru_maxrss, KiB, from wait4() on the workload process), and whether
the run printed `ok <workload> <checksum>` and exited 0. Anything else is a
FAILED run; the harness goes on.

It prints, per workload, the median wall time (min-max), the median CPU time
and the median peak RSS per allocator, with the ratio of the medians to the
reference allocator (mimalloc unless --ref says otherwise), then the geometric
mean of those ratios over the workloads. See bench/README.md.

Python 3.11 standard library only.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import math
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOAD_DIR = os.path.join(HERE, "workloads")
SUPPORT_DIR = os.path.join(HERE, "support")
DEFAULT_BUILD_DIR = os.path.join(HERE, "build")
DEFAULT_FITALLOC = os.path.normpath(os.path.join(HERE, "..", "build", "libfitalloc.so"))
CFLAGS = ["-std=c11", "-O2", "-pthread", "-Wall", "-Wextra"]

# Where Debian (and most distributions) keep the peers' shared objects.
LIB_DIRS = ["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib"]

# name -> (candidate file names, first found wins; Debian package)
PEERS = {
    "mimalloc": (["libmimalloc.so.2"], "libmimalloc2.0"),
    "jemalloc": (["libjemalloc.so.2"], "libjemalloc2"),
    # libtcmalloc_minimal is in libtcmalloc-minimal4, a dependency of
    # libgoogle-perftools4 (which adds the profiling libtcmalloc.so.4).
    "tcmalloc": (["libtcmalloc_minimal.so.4", "libtcmalloc.so.4"], "libgoogle-perftools4"),
}
ALLOCATORS = ["fitalloc", "mimalloc", "jemalloc", "tcmalloc", "glibc"]
# Preferred display order; any other workloads/*.c (except the probe) follow.
WORKLOAD_ORDER = ["churn", "xthread", "threads", "realloc", "large", "tree"]
PROBES = {"pair"}  # built, but not timed here: see callgrind_pair.sh
FITALLOC_BUILD = ("cmake -S /work/main -B /work/main/build -G Ninja "
                  "-DCMAKE_BUILD_TYPE=Release && cmake --build /work/main/build")


def log(msg: str = "") -> None:
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# Discovery and build


def all_workloads() -> list[str]:
    names = sorted(f[:-2] for f in os.listdir(WORKLOAD_DIR) if f.endswith(".c"))
    timed = [n for n in names if n not in PROBES]
    return [n for n in WORKLOAD_ORDER if n in timed] + [n for n in timed if n not in WORKLOAD_ORDER]


def find_peer(name: str) -> str | None:
    files, _ = PEERS[name]
    for f in files:
        for d in LIB_DIRS:
            path = os.path.join(d, f)
            if os.path.exists(path):
                return path
    return None


def discover(wanted: list[str], fitalloc: str, explicit: bool) -> dict[str, str]:
    """Allocator name -> preload path ('' for glibc), in `wanted` order.
    Missing ones are reported on stderr and left out."""
    found: dict[str, str] = {}
    for name in wanted:
        if name == "glibc":
            found[name] = ""
        elif name == "fitalloc":
            if os.path.isfile(fitalloc):
                found[name] = os.path.abspath(fitalloc)
            else:
                log(f"fitalloc: MISSING: {fitalloc} does not exist (build it with: {FITALLOC_BUILD}"
                    f" or pass --fitalloc PATH); going on without it")
        else:
            path = find_peer(name)
            if path:
                found[name] = path
            else:
                files, pkg = PEERS[name]
                log(f"{name}: MISSING: none of {', '.join(files)} in {', '.join(LIB_DIRS)}; "
                    f"install with: apt-get install {pkg}"
                    + ("" if explicit else "; going on without it"))
    return found


def compile_one(cc: str, src: str, exe: str) -> None:
    cmd = [cc, *CFLAGS, "-o", exe, src]
    stamp = exe + ".cmd"
    line = shlex.join(cmd)
    try:
        up_to_date = (os.path.getmtime(exe) >= os.path.getmtime(src)
                      and open(stamp).read() == line)
    except OSError:
        up_to_date = False
    if up_to_date:
        return
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        log(f"build failed: {line}\n{res.stdout}{res.stderr}")
        sys.exit(2)
    if res.stderr.strip():
        log(res.stderr.rstrip())
    with open(stamp, "w") as f:
        f.write(line)


def build(build_dir: str, cc: str) -> None:
    os.makedirs(build_dir, exist_ok=True)
    srcs = [os.path.join(WORKLOAD_DIR, f) for f in sorted(os.listdir(WORKLOAD_DIR)) if f.endswith(".c")]
    srcs += [os.path.join(SUPPORT_DIR, f) for f in sorted(os.listdir(SUPPORT_DIR)) if f.endswith(".c")]
    for src in srcs:
        compile_one(cc, src, os.path.join(build_dir, os.path.basename(src)[:-2]))


def check_preload(build_dir: str, name: str, path: str) -> str | None:
    """Run support/whichmalloc under the preload: None if malloc and free
    resolve into the allocator's library, else a message."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if path:
        env["LD_PRELOAD"] = path
    try:
        res = subprocess.run([os.path.join(build_dir, "whichmalloc")], env=env,
                             capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        return "probe timed out"
    if res.returncode != 0:
        return f"probe exited {res.returncode}: {res.stderr.strip()[:200]}"
    got = dict(line.split(" ", 1) for line in res.stdout.splitlines() if " " in line)
    want = os.path.realpath(path) if path else None
    for fn in ("malloc", "free"):
        where = got.get(fn, "?")
        ok = (os.path.realpath(where) == want) if want else ("libc.so" in os.path.basename(where))
        if not ok:
            return f"{fn} resolves to {where}, not {path or 'libc'} (LD_PRELOAD did not take effect)"
    return None


# --------------------------------------------------------------------------
# Running


@dataclass
class Run:
    rep: int
    workload: str
    allocator: str
    position: int        # place of this allocator in this rep's rotated order
    wall_s: float = math.nan
    user_s: float = math.nan
    sys_s: float = math.nan
    maxrss_kib: int = 0
    exit_code: int = 0
    checksum: str = ""
    status: str = "ok"   # ok | FAILED
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def run_one(build_dir: str, tmp: str, workload: str, size: str, preload: str,
            timeout: float, run: Run) -> None:
    out_path, err_path, stat_path = (os.path.join(tmp, n) for n in ("out", "err", "stat"))
    if os.path.exists(stat_path):
        os.unlink(stat_path)
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)  # runrss sets it for the workload only
    argv = [os.path.join(build_dir, "runrss"), stat_path, preload,
            os.path.join(build_dir, workload), "--size", size]
    timed_out = threading.Event()
    with open(out_path, "wb") as fo, open(err_path, "wb") as fe:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=fo, stderr=fe,
                                env=env, start_new_session=True)

        def kill() -> None:
            timed_out.set()
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            _, status, _ = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        run.wall_s = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
    run.exit_code = proc.returncode

    stat = {}
    try:
        words = open(stat_path).read().split()
        stat = dict(zip(words[0::2], words[1::2]))
        run.user_s = float(stat["utime"])
        run.sys_s = float(stat["stime"])
        run.maxrss_kib = int(stat["maxrss"])
    except (OSError, KeyError, ValueError):
        pass
    out = open(out_path, errors="replace").read()
    err = open(err_path, errors="replace").read()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "ok" and parts[1] == workload:
            run.checksum = parts[2]

    problems = []
    if timed_out.is_set():
        problems.append(f"timeout after {timeout:g}s")
    elif stat.get("signal", "0") != "0":
        sig = int(stat["signal"])
        try:
            signame = signal.Signals(sig).name
        except ValueError:
            signame = f"signal {sig}"
        problems.append(f"killed by {signame}")
    elif run.exit_code != 0:
        problems.append(f"exit {run.exit_code}")
    if "cannot be preloaded" in err:
        problems.append("preload ignored by ld.so")
    if not run.checksum and not problems:
        problems.append("no 'ok' line")
    if problems:
        first_err = next((l.strip() for l in err.splitlines() if l.strip()), "")
        run.status = "FAILED"
        run.note = "; ".join(problems) + (f": {first_err[:160]}" if first_err else "")


def fmt_eta(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    return f"{seconds // 60}m{seconds % 60:02d}s"


# --------------------------------------------------------------------------
# Statistics and report


def gmean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else math.nan


def check_checksums(runs: list[Run]) -> None:
    """Workloads are deterministic: every ok run of a workload must print the
    same checksum. The most common one wins; the others become FAILED."""
    by_wl: dict[str, dict[str, int]] = {}
    for r in runs:
        if r.ok:
            by_wl.setdefault(r.workload, {}).setdefault(r.checksum, 0)
            by_wl[r.workload][r.checksum] += 1
    for r in runs:
        counts = by_wl.get(r.workload, {})
        if r.ok and len(counts) > 1:
            best = max(counts.items(), key=lambda kv: (kv[1], kv[0]))[0]
            if r.checksum != best:
                r.status = "FAILED"
                r.note = f"checksum {r.checksum} differs from the majority {best}"


@dataclass
class Cell:
    n_ok: int = 0
    n: int = 0
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    rss: list[float] = field(default_factory=list)

    def med(self, what: str) -> float:
        xs = getattr(self, what)
        return statistics.median(xs) if xs else math.nan


def summarize(runs: list[Run], workloads: list[str], allocs: list[str]) -> dict:
    cells = {(w, a): Cell() for w in workloads for a in allocs}
    for r in runs:
        c = cells[(r.workload, r.allocator)]
        c.n += 1
        if r.ok:
            c.n_ok += 1
            c.wall.append(r.wall_s)
            c.cpu.append(r.user_s + r.sys_s)
            c.rss.append(r.maxrss_kib / 1024.0)
    return cells


def ratio(x: float, ref: float) -> float:
    if math.isnan(x) or math.isnan(ref) or ref <= 0:
        return math.nan
    return x / ref


def fmt(x: float, spec: str, width: int) -> str:
    return f"{'-':>{width}}" if math.isnan(x) else f"{x:{width}{spec}}"


def report(cells: dict, workloads: list[str], allocs: list[str], ref: str, size: str, reps: int,
           runs: list[Run]) -> str:
    lines = []
    lines.append(f"size={size}, {reps} reps, interleaved; allocators: {', '.join(allocs)}; "
                 f"ratios are median/median vs {ref}")
    lines.append("")
    head = (f"{'workload':<9} {'allocator':<9} {'wall s (min-max)':>22} {'vs ' + ref[:8]:>11}  "
            f"{'cpu s':>6}  {'peak RSS MiB':>12} {'vs ' + ref[:8]:>11}  {'ok':>5}")
    lines.append(head)
    lines.append("-" * len(head))
    for w in workloads:
        refc = cells[(w, ref)]
        for a in allocs:
            c = cells[(w, a)]
            if c.wall:
                span = f"{c.med('wall'):.3f} ({min(c.wall):.3f}-{max(c.wall):.3f})"
            else:
                span = "FAILED"
            okn = f"{c.n_ok}/{c.n}"
            tr = ratio(c.med("wall"), refc.med("wall"))
            rr = ratio(c.med("rss"), refc.med("rss"))
            lines.append(f"{w:<9} {a:<9} {span:>22} {fmt(tr, '.2f', 11)}  {fmt(c.med('cpu'), '.2f', 6)}  "
                         f"{fmt(c.med('rss'), '.1f', 12)} {fmt(rr, '.2f', 11)}  {okn:>5}")
        lines.append("")
    lines.append(f"geometric mean over workloads of the ratio of medians vs {ref} (lower is better)")
    head2 = f"{'allocator':<9} {'time':>7} {'RSS':>7} {'cpu':>7}  workloads"
    lines.append(head2)
    lines.append("-" * len(head2))
    for a in allocs:
        trs, rrs, crs = [], [], []
        for w in workloads:
            cr = ratio(cells[(w, a)].med("cpu"), cells[(w, ref)].med("cpu"))
            if not math.isnan(cr):
                crs.append(cr)
            tr = ratio(cells[(w, a)].med("wall"), cells[(w, ref)].med("wall"))
            rr = ratio(cells[(w, a)].med("rss"), cells[(w, ref)].med("rss"))
            if not math.isnan(tr):
                trs.append(tr)
            if not math.isnan(rr):
                rrs.append(rr)
        note = f"{len(trs)}/{len(workloads)}"
        lines.append(f"{a:<9} {fmt(gmean(trs), '.3f', 7)} {fmt(gmean(rrs), '.3f', 7)} {fmt(gmean(crs), '.3f', 7)}  {note}")
    failed = [r for r in runs if not r.ok]
    if failed:
        lines.append("")
        lines.append(f"FAILED runs ({len(failed)}):")
        for r in failed:
            lines.append(f"  rep {r.rep + 1} {r.workload}/{r.allocator}: {r.note}")
    return "\n".join(lines)


def write_csv(path: str, runs: list[Run], size: str) -> None:
    cols = ["rep", "workload", "allocator", "position", "size", "wall_s", "user_s", "sys_s",
            "maxrss_kib", "exit_code", "status", "checksum", "note"]
    with open(path, "w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(cols)
        for r in runs:
            wr.writerow([r.rep + 1, r.workload, r.allocator, r.position, size,
                         f"{r.wall_s:.6f}", f"{r.user_s:.6f}", f"{r.sys_s:.6f}",
                         r.maxrss_kib, r.exit_code, r.status, r.checksum, r.note])


# --------------------------------------------------------------------------


def parse_list(text: str, valid: list[str], what: str, ap: argparse.ArgumentParser) -> list[str]:
    names = []
    for name in (t.strip() for t in text.split(",")):
        if not name:
            continue
        if name not in valid:
            extra = " ('pair' is the instruction-count probe: use callgrind_pair.sh)" if name in PROBES else ""
            ap.error(f"unknown {what} '{name}'{extra}; valid: {', '.join(valid)}")
        if name not in names:
            names.append(name)
    if not names:
        ap.error(f"empty --{what} list; valid: {', '.join(valid)}")
    return names


def main() -> int:
    workloads_all = all_workloads()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--alloc", "-a", default=None,
                    help=f"comma list of allocators (default: all found). Valid: {', '.join(ALLOCATORS)}")
    ap.add_argument("--workload", "-w", default=None,
                    help=f"comma list of workloads (default: all). Valid: {', '.join(workloads_all)}")
    ap.add_argument("--size", "-s", choices=["smoke", "real"], default="smoke",
                    help="workload size (default smoke: ~0.3-1 s a run; real: ~3-10 s)")
    ap.add_argument("--reps", "-r", type=int, default=5, help="repetitions (default 5)")
    ap.add_argument("--fitalloc", default=DEFAULT_FITALLOC,
                    help=f"path of libfitalloc.so (default {DEFAULT_FITALLOC})")
    ap.add_argument("--build-dir", default=DEFAULT_BUILD_DIR,
                    help=f"where workloads are built (default {DEFAULT_BUILD_DIR})")
    ap.add_argument("--out", "-o", default=None, help="write every run to this CSV file")
    ap.add_argument("--ref", default="mimalloc",
                    help="allocator the ratios are relative to (default mimalloc; "
                         "falls back to glibc when it is not in the run)")
    ap.add_argument("--timeout", type=float, default=None,
                    help="seconds before a run is killed and marked FAILED (default 60 smoke, 300 real)")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"), help="C compiler (default $CC or cc)")
    ap.add_argument("--build-only", action="store_true", help="build the workloads and helpers, then exit")
    ap.add_argument("--list-allocs", action="store_true",
                    help="print 'name<TAB>preload' for each allocator found ('-' for glibc) and exit")
    args = ap.parse_args()

    if args.reps < 1:
        ap.error("--reps must be >= 1")
    explicit = args.alloc is not None
    wanted = parse_list(args.alloc, ALLOCATORS, "alloc", ap) if explicit else list(ALLOCATORS)
    workloads = parse_list(args.workload, workloads_all, "workload", ap) if args.workload else workloads_all
    timeout = args.timeout or (60.0 if args.size == "smoke" else 300.0)
    build_dir = os.path.abspath(args.build_dir)

    found = discover(wanted, args.fitalloc, explicit)
    if args.list_allocs:
        for name, path in found.items():
            print(f"{name}\t{path or '-'}")
        return 0 if found else 1

    build(build_dir, args.cc)
    if args.build_only:
        log(f"built into {build_dir}")
        return 0

    if "fitalloc" in found:
        # Run a private copy, so that a rebuild during the comparison cannot
        # mix two versions (or hit a half-written file).
        src = os.path.realpath(found["fitalloc"])
        snap = os.path.join(build_dir, "libfitalloc.snapshot.so")
        shutil.copy2(src, snap)
        digest = hashlib.sha256(open(snap, "rb").read()).hexdigest()[:12]
        log(f"fitalloc: using a snapshot of {src} (sha256 {digest}, "
            f"modified {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(os.path.getmtime(src)))})")
        found["fitalloc"] = snap

    allocs = []
    for name, path in found.items():
        problem = check_preload(build_dir, name, path)
        if problem is None:
            allocs.append(name)
        elif "did not take effect" in problem:
            log(f"{name}: UNUSABLE: {problem}; going on without it")
        else:
            # It loads but misbehaves: keep it so that its runs show as FAILED.
            log(f"{name}: WARNING: preload probe failed ({problem}); its runs will likely fail")
            allocs.append(name)
    if not allocs:
        log("no allocator to run")
        return 2
    ref = args.ref
    if ref not in allocs:
        fallback = "glibc" if "glibc" in allocs else allocs[0]
        log(f"reference '{ref}' is not in this run; ratios are relative to {fallback}")
        ref = fallback
    for name in allocs:
        log(f"{name:<9} {found[name] or '(no preload)'}")

    total = args.reps * len(workloads) * len(allocs)
    runs: list[Run] = []
    t_start = time.perf_counter()
    tty = sys.stderr.isatty()
    with tempfile.TemporaryDirectory(prefix="fitalloc-bench-") as tmp:
        i = 0
        for rep in range(args.reps):
            k = rep % len(allocs)
            order = allocs[k:] + allocs[:k]
            for w in workloads:
                for pos, a in enumerate(order):
                    i += 1
                    run = Run(rep=rep, workload=w, allocator=a, position=pos)
                    run_one(build_dir, tmp, w, args.size, found[a], timeout, run)
                    runs.append(run)
                    elapsed = time.perf_counter() - t_start
                    eta = elapsed / i * (total - i)
                    msg = (f"[{i:3d}/{total}] rep {rep + 1}/{args.reps} {w:<8} {a:<9} "
                           f"{run.wall_s:6.2f}s {run.maxrss_kib / 1024:7.1f}MiB  "
                           f"elapsed {fmt_eta(elapsed)} ETA {fmt_eta(eta)}")
                    if not run.ok:
                        msg += f"  FAILED: {run.note}"
                    if tty and run.ok:
                        print("\r" + msg + "\033[K", end="", file=sys.stderr, flush=True)
                    else:
                        print(("\r\033[K" if tty else "") + msg, file=sys.stderr, flush=True)
        if tty:
            print(file=sys.stderr)

    check_checksums(runs)
    if args.out:
        write_csv(args.out, runs, args.size)
        log(f"raw runs written to {args.out}")
    cells = summarize(runs, workloads, allocs)
    print(report(cells, workloads, allocs, ref, args.size, args.reps, runs))
    return 1 if any(not r.ok for r in runs) else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""What each heap profiler costs on one program (docs/profile.md, record 065):

    python3 bench/support/profiler_costs.py [-r ROUNDS] [-b BUILD_DIR] [--churn MIB]

The program is tests/command/profile_sites.c: 76 MiB live at its peak from three sites, then
MIB MiB (default 1024) allocated and freed in 1 KiB blocks. Each configuration runs ROUNDS times
(default 5), the rounds interleaved. Printed: the medians of CPU time (user + system of the
process and the children it waited for, from wait4, in microseconds: a profiler's helper
process counts) and of peak RSS (the largest of those processes), and their ratios to the same
allocator without its profiler. A configuration whose allocator or tool is missing is left out."""

import argparse
import glob
import os
import shutil
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIBDIR = "/usr/lib/x86_64-linux-gnu"


def configs(build, work):
    """(name, its baseline's name, environment, command prefix, files it needs)."""
    fa = f"{build}/libfitalloc.so"
    tc = f"{LIBDIR}/libtcmalloc.so.4"
    je = f"{LIBDIR}/libjemalloc.so.2"
    try:
        with open(fa, "rb") as f:
            profiling = b"PROFILE_RATE" in f.read()  # the option's name, in the options table
    except OSError:
        profiling = False
    return [
        ("glibc", "glibc", {}, [], []),
        ("fitalloc", "fitalloc", {"LD_PRELOAD": fa}, [], [fa]),
        ("fitalloc FITALLOC_PROFILE", "fitalloc",
         {"LD_PRELOAD": fa, "FITALLOC_PROFILE": f"{work}/fa"}, [],
         [fa] if profiling else [None]),
        ("tcmalloc", "tcmalloc", {"LD_PRELOAD": tc}, [], [tc]),
        ("tcmalloc HEAPPROFILE", "tcmalloc", {"LD_PRELOAD": tc, "HEAPPROFILE": f"{work}/hp"},
         [], [tc]),
        ("jemalloc", "jemalloc", {"LD_PRELOAD": je}, [], [je]),
        ("jemalloc prof:true", "jemalloc",
         {"LD_PRELOAD": je, "MALLOC_CONF": f"prof:true,prof_final:true,prof_prefix:{work}/je"},
         [], [je]),
        ("heaptrack", "glibc", {}, ["heaptrack", "-o", f"{work}/ht"], [shutil.which("heaptrack")]),
        ("valgrind massif", "glibc", {},
         ["valgrind", "-q", "--tool=massif", f"--massif-out-file={work}/massif.out"],
         [shutil.which("valgrind")]),
    ]


def measure(cmd, env, cwd):
    """(CPU seconds, peak RSS KiB) of one run."""
    with open(os.devnull, "w") as null:
        child = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=null, stderr=null)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit status {child.returncode}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("-r", "--rounds", type=int, default=5)
    p.add_argument("-b", "--build", default=f"{ROOT}/build")
    p.add_argument("--churn", type=int, default=1024, metavar="MIB")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="profiler-costs.") as work:
        program = f"{work}/sites"
        subprocess.run([os.environ.get("CC", "cc"), "-O2", "-g", "-o", program,
                        f"{ROOT}/tests/command/profile_sites.c", "-ldl"], check=True)
        runs = [c for c in configs(os.path.abspath(args.build), work)
                if all(f and os.path.exists(f) for f in c[4])]
        samples = {c[0]: [] for c in runs}
        for _ in range(args.rounds):
            for name, _, env, prefix, _ in runs:
                samples[name].append(measure(prefix + [program, str(args.churn)],
                                             dict(os.environ, **env), work))
                for leftover in glob.glob(f"{work}/*.*"):
                    os.remove(leftover)
    med = {n: (statistics.median(c for c, _ in s), statistics.median(r for _, r in s))
           for n, s in samples.items()}
    print(f"{'configuration':28} {'CPU s':>7} {'peak RSS MiB':>13} {'CPU ratio':>10} "
          f"{'RSS ratio':>10}")
    for name, base, *_ in runs:
        (c, r), (bc, br) = med[name], med[base]
        print(f"{name:28} {c:7.3f} {r / 1024:13.1f} {c / bc:10.2f} {r / br:10.2f}")


if __name__ == "__main__":
    main()

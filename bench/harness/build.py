"""Compile the workloads and the helpers (cc -O2), skipping what is up to date."""

from __future__ import annotations

import glob
import os
import shlex
import subprocess
import sys

from .paths import ROOT_DIR, SUPPORT_DIR, WORKLOAD_DIR, WORKLOAD_LIB_DIR

# WHY -fno-builtin-malloc/free: gcc may delete a malloc/free pair whose block is not used,
# and some workloads (cs33 test 1) are little more than such pairs.
CFLAGS = ["-std=c11", "-O2", "-pthread", "-Wall", "-Wextra",
          "-fno-builtin-malloc", "-fno-builtin-free", "-fno-builtin-calloc",
          "-fno-builtin-realloc"]
LDLIBS = ["-lm"]


class BuildError(Exception):
    pass


def _headers() -> list[str]:
    """Headers every program may include: a change rebuilds them all."""
    return (glob.glob(os.path.join(WORKLOAD_LIB_DIR, "*.h"))
            + [os.path.join(ROOT_DIR, "include", "fitalloc-lab.h")])


def compile_one(cc: str, src: str, exe: str, deps: list[str]) -> None:
    cmd = [cc, *CFLAGS, "-o", exe, src, *LDLIBS]
    stamp = exe + ".cmd"
    line = shlex.join(cmd)
    try:
        newest = max(os.path.getmtime(p) for p in [src, *deps] if os.path.exists(p))
        with open(stamp) as f:
            up_to_date = os.path.getmtime(exe) >= newest and f.read() == line
    except OSError:
        up_to_date = False
    if up_to_date:
        return
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise BuildError(f"build failed: {line}\n{res.stdout}{res.stderr}")
    if res.stderr.strip():
        print(res.stderr.rstrip(), file=sys.stderr)
    with open(stamp, "w") as f:
        f.write(line)


def build(build_dir: str, cc: str) -> None:
    os.makedirs(build_dir, exist_ok=True)
    deps = _headers()
    for d in (WORKLOAD_DIR, SUPPORT_DIR):
        for f in sorted(os.listdir(d)):
            if f.endswith(".c"):
                compile_one(cc, os.path.join(d, f), os.path.join(build_dir, f[:-2]), deps)

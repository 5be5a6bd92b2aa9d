"""The allocators: peers found on this machine, and the lab configurations of fitalloc.

Every run is one process under LD_PRELOAD=<allocator> (glibc: no preload). A lab configuration
is libfitalloc.so with FITALLOC_MODE=lab and the FITALLOC_* variables of that configuration.
"""

from __future__ import annotations

import glob
import os
import platform
import re
import subprocess
from dataclasses import dataclass, field

from .paths import DEFAULT_BUILD_DIR

# Where Debian (and most distributions) keep the peers' shared objects.
LIB_DIRS = ["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib"]

# name -> (candidate file names, first found wins; Debian package)
PEERS = {
    "mimalloc": (["libmimalloc.so.2"], "libmimalloc2.0"),
    "jemalloc": (["libjemalloc.so.2"], "libjemalloc2"),
    # libtcmalloc_minimal is in libtcmalloc-minimal4, a dependency of
    # libgoogle-perftools4 (which adds the profiling libtcmalloc.so.4).
    "tcmalloc": (["libtcmalloc_minimal.so.4", "libtcmalloc.so.4"], "libgoogle-perftools4"),
    # LLVM's hardened allocator, the one secure mode is measured against: compiler-rt's
    # standalone scudo, in LLVM's own directory (a pattern; the newest match wins).
    "scudo": ([f"/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.scudo_standalone-"
               f"{platform.machine()}.so"], "libclang-rt-14-dev"),
}
PEER_NAMES = ["fitalloc", "fitalloc-secure", "mimalloc", "jemalloc", "tcmalloc", "scudo", "glibc"]
# fitalloc's own variants: the same library with these FITALLOC_* variables (fitalloc-secure:
# libfitalloc-secure.so, secure_library). "{tmp}" in a value is the run's scratch directory
# (run_env).
FITALLOC_VARIANTS = {"fitalloc": {}, "fitalloc-secure": {"FITALLOC_SECURE": "1"},
                     "fitalloc-trace": {"FITALLOC_TRACE": "{tmp}/trace.fat"},
                     "fitalloc-mesh": {"FITALLOC_MESH": "1"},
                     # meshing with the mesher's CPU bounded to 10 % of the process's (record 098)
                     "fitalloc-mesh-cpu10": {"FITALLOC_MESH": "1", "FITALLOC_MESH_CPU": "10"},
                     # meshing that merges nothing, only gives back empty frames (record 128)
                     "fitalloc-mesh-giveback": {"FITALLOC_MESH": "1", "FITALLOC_MESH_MERGE": "0"},
                     # the heap profiler (docs/profile.md) at its default rate, at 64 KiB, at 2 MiB
                     "fitalloc-profile": {"FITALLOC_PROFILE": "{tmp}/profile"},
                     "fitalloc-profile-64k": {"FITALLOC_PROFILE": "{tmp}/profile",
                                              "FITALLOC_PROFILE_RATE": "64K"},
                     "fitalloc-profile-2m": {"FITALLOC_PROFILE": "{tmp}/profile",
                                             "FITALLOC_PROFILE_RATE": "2M"}}
# --baseline: another build of fitalloc, run beside this one to measure a change (and in secure
# mode too when fitalloc-secure runs).
BASELINE = "fitalloc-baseline"
BASELINE_SECURE = "fitalloc-secure-baseline"
# Valid with -a but not in the default run: what tracing costs (docs/trace.md) is a question of
# its own, and a traced run writes its trace file. Meshing (FITALLOC_MESH=1) is off by default
# and gives back memory a fragmented heap holds: the Redis study runs it beside fitalloc
# (redis_study.py); in the timed runs it would add a seventh of their time for workloads that
# are not its question. The heap profiler's costs (issue 41) are a question of their own too.
OPTIONAL_NAMES = ["fitalloc-trace", "fitalloc-mesh", "fitalloc-mesh-cpu10",
                  "fitalloc-mesh-giveback", "mesh",
                  "fitalloc-profile", "fitalloc-profile-64k", "fitalloc-profile-2m"]
FITALLOC_BUILD = ("cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "
                  "&& cmake --build build   (or: bash tools/bench.sh, which does it)")
# Mesh (PLDI 2019), the allocator meshing comes from: not a Debian package, so built on request
# by bench/support/build_mesh.sh (it clones Mesh) into the bench's build directory (mesh_lib);
# the Redis study runs it when it is there.
MESH_BUILD = "bash bench/support/build_mesh.sh (clones Mesh: needs the network)"

_GLOBAL = {"FITALLOC_LOCK": "global"}
_ARENA_64K = {"FITALLOC_LAB_ARENA": "65536", "FITALLOC_LAB_EXACT_MAX": "80"}

# name -> (what it is, FITALLOC_* variables besides FITALLOC_MODE=lab)
LAB_CONFIGS: dict[str, tuple[str, dict[str, str]]] = {
    "lab-first": ("first fit, one global lock", {"FITALLOC_POLICY": "first", **_GLOBAL}),
    "lab-next": ("next fit, one global lock", {"FITALLOC_POLICY": "next", **_GLOBAL}),
    "lab-best": ("best fit, one global lock", {"FITALLOC_POLICY": "best", **_GLOBAL}),
    "lab-worst": ("worst fit, one global lock", {"FITALLOC_POLICY": "worst", **_GLOBAL}),
    "lab-segregated": ("segregated fit (exact lists for small sizes, best fit above), one "
                       "global lock", {"FITALLOC_POLICY": "segregated", **_GLOBAL}),
    # The textbook linear free list instead of the O(log n) index: same blocks chosen, the
    # classic studies' search cost.
    "lab-first-list": ("first fit on the textbook linear list, one global lock",
                       {"FITALLOC_POLICY": "first", "FITALLOC_LAB_INDEX": "list", **_GLOBAL}),
    "lab-best-list": ("best fit on the textbook linear list, one global lock",
                      {"FITALLOC_POLICY": "best", "FITALLOC_LAB_INDEX": "list", **_GLOBAL}),
    "lab-best-thread": ("best fit, a heap per thread",
                        {"FITALLOC_POLICY": "best", "FITALLOC_LOCK": "thread"}),
    "lab-best-arenas": ("best fit, arenas with their own locks",
                        {"FITALLOC_POLICY": "best", "FITALLOC_LOCK": "arenas"}),
    # ID1206's first implementation (one list, no merging) is next fit without coalescing: its
    # free list is searched from where it last changed. Segregated fit without merging does
    # not run out on that workload (tests/lab/test_arena_id1206.c), but is shown too.
    "lab-next64k-nomerge": ("next fit on one 64 KiB arena, no merging (ID1206's first "
                            "implementation)", {"FITALLOC_POLICY": "next", **_ARENA_64K,
                                                "FITALLOC_LAB_COALESCE": "0", **_GLOBAL}),
    "lab-seg64k": ("segregated fit on one 64 KiB arena, exact lists up to 80 B, merging "
                   "(ID1206's final implementation)",
                   {"FITALLOC_POLICY": "segregated", **_ARENA_64K, "FITALLOC_LAB_COALESCE": "1",
                    **_GLOBAL}),
    "lab-seg64k-nomerge": ("the same without merging",
                           {"FITALLOC_POLICY": "segregated", **_ARENA_64K,
                            "FITALLOC_LAB_COALESCE": "0", **_GLOBAL}),
}


@dataclass(frozen=True)
class Allocator:
    name: str
    preload: str  # '' for glibc
    env: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    lab: bool = False

    @property
    def env_text(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.env.items())


def mesh_lib(build_dir: str = DEFAULT_BUILD_DIR) -> str:
    return os.path.join(build_dir, "libmesh.so")


def valid_names() -> list[str]:
    return PEER_NAMES + OPTIONAL_NAMES + list(LAB_CONFIGS) + ["lab"]


def secure_library(fitalloc: str) -> str | None:
    """libfitalloc-secure.so beside the given libfitalloc.so; else the library itself if it has
    secure mode (a build from before secure mode had a library of its own: it exports the
    checked memcpy); else None."""
    folder, name = os.path.split(fitalloc)
    secure = os.path.join(folder, name.replace("libfitalloc", "libfitalloc-secure", 1))
    if secure != fitalloc and os.path.isfile(secure):
        return secure
    nm = subprocess.run(["nm", "-D", "--defined-only", fitalloc], capture_output=True, text=True)
    return fitalloc if re.search(r" T memcpy$", nm.stdout, re.M) else None


def variant_library(name: str, fitalloc: str) -> str | None:
    return secure_library(fitalloc) if name == "fitalloc-secure" else fitalloc


def find_peer(name: str) -> str | None:
    files, _ = PEERS[name]
    for f in files:
        for d in LIB_DIRS:
            paths = sorted(glob.glob(os.path.join(d, f)))  # an absolute f ignores d
            if paths:
                return paths[-1]
    return None


def missing_message(name: str, fitalloc: str, build_dir: str = DEFAULT_BUILD_DIR) -> str:
    if name in FITALLOC_VARIANTS:
        return f"{name}: MISSING: {fitalloc} does not exist (build it with: {FITALLOC_BUILD})"
    if name == "mesh":
        return (f"mesh: MISSING: {mesh_lib(build_dir)} does not exist (build it with: "
                f"{MESH_BUILD})")
    files, pkg = PEERS[name]
    return (f"{name}: MISSING: none of {', '.join(files)} in {', '.join(LIB_DIRS)}; "
            f"install with: apt-get install {pkg}")


def lab_allocator(name: str, fitalloc_path: str) -> Allocator:
    _, env = LAB_CONFIGS[name]
    return Allocator(name, fitalloc_path, {"FITALLOC_MODE": "lab", **env}, lab=True)


def discover_peers(wanted: list[str], fitalloc: str,
                   build_dir: str = DEFAULT_BUILD_DIR) -> tuple[list[Allocator], list[str]]:
    """The wanted peers that exist (in `wanted` order) and a message for each missing one."""
    found, missing = [], []
    for name in wanted:
        if name == "glibc":
            found.append(Allocator("glibc", ""))
        elif name in FITALLOC_VARIANTS:
            path = variant_library(name, fitalloc) if os.path.isfile(fitalloc) else None
            if path:
                found.append(Allocator(name, os.path.abspath(path), FITALLOC_VARIANTS[name]))
            elif os.path.isfile(fitalloc):
                missing.append(f"{name}: MISSING: no libfitalloc-secure.so beside {fitalloc} "
                               f"(build it with: {FITALLOC_BUILD})")
            else:
                missing.append(missing_message(name, fitalloc))
        elif name == "mesh":
            if os.path.isfile(mesh_lib(build_dir)):
                found.append(Allocator(name, mesh_lib(build_dir)))
            else:
                missing.append(missing_message(name, fitalloc, build_dir))
        else:
            path = find_peer(name)
            if path:
                found.append(Allocator(name, path))
            else:
                missing.append(missing_message(name, fitalloc))
    return found, missing


def run_env(alloc: Allocator, tmp: str | None = None) -> dict[str, str]:
    """The environment of a run: ours without LD_PRELOAD (runrss sets it for the workload
    only) and without FITALLOC_* (so a variable left in the shell cannot change a run), plus
    the allocator's own variables, "{tmp}" in them replaced by the run's scratch directory
    (a probe, which has none, traces to /dev/null)."""
    env = {k: v for k, v in os.environ.items()
           if k != "LD_PRELOAD" and not k.startswith("FITALLOC_")}
    for k, v in alloc.env.items():
        if "{tmp}" in v:
            v = v.replace("{tmp}", tmp) if tmp else os.devnull
        env[k] = v
    return env


def _run_probe(build_dir: str, program: str, alloc: Allocator) -> subprocess.CompletedProcess:
    env = run_env(alloc)
    if alloc.preload:
        env["LD_PRELOAD"] = alloc.preload
    return subprocess.run([os.path.join(build_dir, program)], env=env, capture_output=True,
                          text=True, timeout=30)


def check_preload(build_dir: str, alloc: Allocator) -> str | None:
    """None if malloc and free resolve into the allocator's library (support/whichmalloc);
    else a message. ld.so only warns when a preload cannot be loaded, and goes on with glibc."""
    try:
        res = _run_probe(build_dir, "whichmalloc", alloc)
    except subprocess.TimeoutExpired:
        return "probe timed out"
    if res.returncode != 0:
        return f"probe exited {res.returncode}: {res.stderr.strip()[:200]}"
    got = dict(line.split(" ", 1) for line in res.stdout.splitlines() if " " in line)
    want = os.path.realpath(alloc.preload) if alloc.preload else None
    for fn in ("malloc", "free"):
        where = got.get(fn, "?")
        ok = (os.path.realpath(where) == want) if want else ("libc.so" in os.path.basename(where))
        if not ok:
            return (f"{fn} resolves to {where}, not {alloc.preload or 'libc'} "
                    f"(LD_PRELOAD did not take effect)")
    return None


def lab_active(build_dir: str, alloc: Allocator) -> bool:
    """Does the policy lab really run under this configuration (support/labprobe)?"""
    try:
        res = _run_probe(build_dir, "labprobe", alloc)
    except subprocess.TimeoutExpired:
        return False
    return res.returncode == 0 and res.stdout.startswith("lab 1")

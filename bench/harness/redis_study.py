"""The Redis study (docs/bench.md): Mesh's Redis experiment (Powers et al., "Mesh: Compacting
Memory Management for C/C++ Applications", PLDI 2019, section 6) under every allocator.

Debian's redis-server, one process per run under LD_PRELOAD of the allocator, on a unix socket
with a 100 MB maxmemory and LRU eviction, is fed one SET per key through `redis-cli --pipe`:
700,000 keys with 240-byte values, then 170,000 keys with 492-byte values, so that keys of the
first load are evicted at random and the pages they were on stay partly used. After a pause of
2 s the server's RSS and PSS are read and compared with Redis's own count of the bytes it holds
(INFO's used_memory): RSS / used_memory is the allocator's overhead on this heap.

WHY PSS beside RSS: a meshing allocator maps one physical page at several virtual addresses;
VmRSS counts every mapping, /proc/PID/smaps_rollup's Pss counts the page once (shared by the
process with itself), so PSS is the honest measure of what meshing gives back.

WHY a preload of libc.so.6 for glibc: Debian's redis-server links libjemalloc.so.2, which
defines malloc; without a preload Redis runs on jemalloc. Preloading glibc's own libc puts it
first in the lookup order, so malloc resolves to glibc's. Every allocator is checked the same
way before it runs (LD_DEBUG=bindings of `redis-server --version`): the row of an allocator
whose malloc does not resolve into its library is '-' with the reason.

Writes into <results>/redis/: redis.json (every run, its samples, the medians) and
redis_memory.png (RSS and PSS over time per allocator). The report's section: section().
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field

from . import allocators as al
from .palette import colour

TITLE = "Redis with LRU eviction (Mesh's experiment)"
# Mesh's experiment at scale 1; a study at scale s has s times the keys and the maxmemory.
KEYS1, VALUE1 = 700_000, 240
KEYS2, VALUE2 = 170_000, 492
MAXMEMORY = 100 * 1024 * 1024  # redis' "100mb"
FULL_SCALE = 1.0
# The default bench's short version: a quarter of the keys and of the maxmemory.
SHORT_SCALE = 0.25
PAUSE_S = 2.0
SAMPLE_S = 0.1
# A run that takes longer than this has hung (scale 1 takes about 10 s).
RUN_TIMEOUT_S = 300.0
# Published: Mesh 39 % less memory than jemalloc, as Redis's active defragmentation, +2 % time.
MESH_PAPER = {"less_than_jemalloc": 0.39, "ratio": 1.13, "time": 0.02}
# The allocators of the bench a study never runs: tracing writes a trace, and costs apart.
LEFT_OUT = {"fitalloc-trace"}


@dataclass
class Tools:
    server: str
    cli: str
    libc: str  # what glibc's row preloads


def locate() -> tuple[Tools | None, str | None]:
    """redis-server and redis-cli, and glibc's libc.so.6 as redis-server loads it; or why the
    study cannot run."""
    server, cli = shutil.which("redis-server"), shutil.which("redis-cli")
    if not server or not cli:
        what = "redis-server" if not server else "redis-cli"
        pkg = "redis-server" if not server else "redis-tools"
        return None, (f"Redis study skipped: {what} not found (Debian: apt-get install "
                      f"redis-server redis-tools; {pkg} provides it)")
    try:
        res = subprocess.run(["ldd", server], capture_output=True, text=True, timeout=30)
        m = re.search(r"^\s*libc\.so\.6 => (\S+)", res.stdout, re.M)
    except (OSError, subprocess.TimeoutExpired):
        m = None
    libc = m.group(1) if m else ""  # glibc's row is then '-', with the reason
    return Tools(server, cli, libc), None


def study_allocators(usable: list[al.Allocator], build_dir: str) -> list[al.Allocator]:
    """The bench's allocators of this run, with fitalloc-mesh beside fitalloc when the run
    has fitalloc and not fitalloc-mesh, and Mesh itself when bench/support/build_mesh.sh has
    built it into the bench's build directory: meshing is the point of the study."""
    out = [a for a in usable if a.name not in LEFT_OUT and not a.lab]
    names = [a.name for a in out]
    fit = next((a for a in out if a.name == "fitalloc"), None)
    if fit and "fitalloc-mesh" not in names:
        mesh = al.Allocator("fitalloc-mesh", fit.preload, al.FITALLOC_VARIANTS["fitalloc-mesh"])
        out.insert(names.index("fitalloc") + 1, mesh)
    if fit and "mesh" not in names and os.path.isfile(al.mesh_lib(build_dir)):
        out.append(al.Allocator("mesh", al.mesh_lib(build_dir)))
    return out


def preload_of(alloc: al.Allocator, tools: Tools) -> str:
    return alloc.preload or tools.libc


def run_env(alloc: al.Allocator, tools: Tools, tmp: str) -> dict[str, str]:
    env = al.run_env(alloc, tmp)
    env["LD_PRELOAD"] = preload_of(alloc, tools)
    env["LC_ALL"] = "C"
    return env


def check_binding(alloc: al.Allocator, tools: Tools, tmp: str) -> str | None:
    """None when redis-server's malloc and free resolve into the allocator's library, else
    why not (ld.so falls back silently)."""
    want = preload_of(alloc, tools)
    if not want:
        return "no libc.so.6 found in ldd's output for redis-server"
    env = run_env(alloc, tools, tmp)
    env["LD_DEBUG"] = "bindings"
    try:
        res = subprocess.run([tools.server, "--version"], env=env, capture_output=True,
                             text=True, errors="replace", timeout=30)
    except subprocess.TimeoutExpired:
        return "redis-server --version timed out"
    exe = os.path.basename(tools.server)
    for fn in ("malloc", "free"):
        m = re.search(rf"binding file \S*{re.escape(exe)} \[0\] to (\S+) \[0\]: normal symbol "
                      rf"`{fn}'", res.stderr)
        if not m:
            return f"ld.so did not say where redis-server's {fn} resolves"
        if os.path.realpath(m.group(1)) != os.path.realpath(want):
            return f"redis-server's {fn} resolves to {m.group(1)}, not {want}"
    return None


def resp(*args: bytes) -> bytes:
    """One command in Redis's protocol (RESP): an array of bulk strings."""
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)


def write_load(path: str, first: int, count: int, size: int) -> None:
    value = b"x" * size
    with open(path, "wb") as f:
        for start in range(first, first + count, 10_000):
            f.write(b"".join(resp(b"SET", b"key:%08d" % i, value)
                             for i in range(start, min(first + count, start + 10_000))))


@dataclass
class Size:
    scale: float
    keys1: int
    keys2: int
    maxmemory: int

    @classmethod
    def of(cls, scale: float) -> "Size":
        return cls(scale, max(1, round(KEYS1 * scale)), max(1, round(KEYS2 * scale)),
                   round(MAXMEMORY * scale))


def _proc_bytes(pid: int, name: str, key: str) -> int | None:
    """The line `key` of /proc/PID/NAME (a size in KiB), in bytes; None once the process is
    gone."""
    try:
        with open(f"/proc/{pid}/{name}") as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def read_rss(pid: int) -> int | None:
    """VmRSS in bytes, None once the process is gone."""
    return _proc_bytes(pid, "status", "VmRSS:")


def read_pss(pid: int) -> int | None:
    return _proc_bytes(pid, "smaps_rollup", "Pss:")


class Sampler(threading.Thread):
    """RSS and PSS of a process every period seconds from t0 until stop()."""

    def __init__(self, pid: int, t0: float, period: float = SAMPLE_S):
        super().__init__(daemon=True)
        self.pid, self.t0, self.period = pid, t0, period
        self.samples: list[tuple[float, int, int]] = []  # (s since t0, rss, pss)
        self._done = threading.Event()

    def sample(self) -> None:
        rss, pss = read_rss(self.pid), read_pss(self.pid)
        if rss is not None and pss is not None:
            self.samples.append((round(time.perf_counter() - self.t0, 3), rss, pss))

    def run(self) -> None:
        while not self._done.is_set():
            self.sample()
            self._done.wait(self.period)

    def stop(self) -> None:
        self._done.set()
        self.join()


def redis_cli(tools: Tools, sock: str, *args: str, stdin=None,
              timeout: float = 30.0) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    return subprocess.run([tools.cli, "-s", sock, *args], stdin=stdin, capture_output=True,
                          text=True, errors="replace", timeout=timeout, env=env)


def parse_info(text: str) -> dict[str, str]:
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line
                and not line.startswith("#"))


def stop_server(proc: subprocess.Popen) -> None:
    """The server ended (SIGTERM, then its session killed if it has not in 10 s)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def one_run(alloc: al.Allocator, tools: Tools, size: Size, loads: list[tuple[str, int]],
            tmp: str) -> dict:
    """One server under one allocator: start, both loads, the pause, INFO; its record."""
    run = {"allocator": alloc.name, "status": "ok", "note": "", "load_s": None,
           "used_memory": None, "rss": None, "pss": None, "evicted_keys": None, "keys": None,
           "load_end_s": None, "samples": []}
    work = tempfile.mkdtemp(prefix="redis-", dir=tmp)
    sock = os.path.join(work, "redis.sock")
    errlog = os.path.join(work, "server.log")
    cmd = [tools.server, "--port", "0", "--unixsocket", sock, "--save", "",
           "--appendonly", "no", "--maxmemory", str(size.maxmemory),
           "--maxmemory-policy", "allkeys-lru", "--dir", work, "--logfile", errlog]
    with open(os.devnull, "wb") as null:
        proc = subprocess.Popen(cmd, env=run_env(alloc, tools, work), stdin=null, stdout=null,
                                stderr=null, start_new_session=True)
    sampler = None

    def fail(note: str) -> dict:
        run["status"], run["note"] = "FAILED", note
        try:
            with open(errlog, errors="replace") as f:
                last = [line.strip() for line in f if line.strip()][-1:]
            if last and proc.poll() is not None:
                run["note"] += f" (server log: {last[0][:200]})"
        except OSError:
            pass
        return run

    try:
        deadline = time.monotonic() + 10.0
        while True:
            if proc.poll() is not None:
                return fail(f"redis-server exited {proc.returncode} at start")
            if os.path.exists(sock) and redis_cli(tools, sock, "ping").stdout.strip() == "PONG":
                break
            if time.monotonic() > deadline:
                return fail("redis-server did not answer PING within 10 s")
            time.sleep(0.05)
        t0 = time.perf_counter()
        sampler = Sampler(proc.pid, t0)
        sampler.start()
        for path, count in loads:
            with open(path, "rb") as f:
                res = redis_cli(tools, sock, "--pipe", stdin=f, timeout=RUN_TIMEOUT_S)
            m = re.search(r"errors: (\d+), replies: (\d+)", res.stdout)
            if res.returncode != 0 or not m or int(m.group(1)) or int(m.group(2)) != count:
                if proc.poll() is not None:
                    return fail(f"redis-server died during the load (exit {proc.returncode})")
                tail = (res.stdout.strip().splitlines() or [""])[-1]
                return fail(f"redis-cli --pipe exit {res.returncode}: {tail[:200]}")
        t1 = time.perf_counter()
        run["load_s"] = round(t1 - t0, 3)
        run["load_end_s"] = round(t1 - t0, 3)
        time.sleep(PAUSE_S)
        sampler.stop()
        rss, pss = read_rss(proc.pid), read_pss(proc.pid)
        res = redis_cli(tools, sock, "info")
        if proc.poll() is not None or rss is None or pss is None:
            return fail(f"redis-server died after the load (exit {proc.returncode})")
        info = parse_info(res.stdout)
        try:
            run["used_memory"] = int(info["used_memory"])
            run["evicted_keys"] = int(info.get("evicted_keys", "0"))
            m = re.match(r"keys=(\d+)", info.get("db0", ""))
            run["keys"] = int(m.group(1)) if m else 0
        except (KeyError, ValueError):
            return fail(f"INFO has no used_memory: {res.stdout[:200]!r}")
        run["rss"], run["pss"] = rss, pss
        return run
    except subprocess.TimeoutExpired as e:
        return fail(f"{' '.join(e.cmd[-2:])} timed out")
    finally:
        if sampler is not None:
            if sampler.is_alive():
                sampler.stop()
            run["samples"] = sampler.samples
        stop_server(proc)
        shutil.rmtree(work, ignore_errors=True)


def _median(xs: list) -> float | None:
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def summarize(runs: list[dict]) -> dict:
    """Medians of one allocator's runs that passed."""
    ok = [r for r in runs if r["status"] == "ok"]
    out = {"runs": len(runs), "ok": len(ok)}
    for k in ("load_s", "used_memory", "rss", "pss", "evicted_keys", "keys"):
        out[k] = _median([r[k] for r in ok])
    out["rss_ratio"] = _median([r["rss"] / r["used_memory"] for r in ok])
    out["pss_ratio"] = _median([r["pss"] / r["used_memory"] for r in ok])
    return out


def measure(allocs: list[al.Allocator], tools: Tools, tmp: str, reps: int, rows: dict, one,
            summary, describe, label: str, log) -> None:
    """The runs of a study of servers (this one, server_study.py) into rows[name]: each
    allocator's binding checked first (a row that fails it is "unusable", with the reason),
    then `reps` repetitions of one(allocator), interleaved, the order rotated by one place per
    repetition as the bench's runs; then each row's medians (summary(runs)) and its failed
    runs named."""
    usable = []
    for a in allocs:
        problem = check_binding(a, tools, tmp)
        if problem:
            rows[a.name]["status"], rows[a.name]["note"] = "unusable", problem
            log(f"{label}: {a.name}: not measured: {problem}")
        else:
            usable.append(a)
    for rep in range(reps):
        k = rep % len(usable) if usable else 0
        for a in usable[k:] + usable[:k]:
            r = one(a)
            r["rep"] = rep
            rows[a.name]["runs"].append(r)
            what = describe(r) if r["status"] == "ok" else f"FAILED: {r['note']}"
            log(f"{label}: rep {rep + 1}/{reps} {a.name}: {what}")
    for row in rows.values():
        row["median"] = summary(row["runs"]) if row["runs"] else None
        failed = [r for r in row["runs"] if r["status"] != "ok"]
        if failed:
            row["status"] = "FAILED"
            row["note"] = "; ".join(f"rep {r['rep'] + 1}: {r['note']}" for r in failed)


def run(out_root: str, tools: Tools, allocs: list[al.Allocator], scale: float, reps: int,
        draw: bool, log) -> dict:
    """The whole study into out_root/redis/; returns (and writes) redis.json's document."""
    out_dir = os.path.join(out_root, "redis")
    os.makedirs(out_dir, exist_ok=True)
    size = Size.of(scale)
    t_start = time.perf_counter()
    rows: dict[str, dict] = {a.name: {"name": a.name, "preload": preload_of(a, tools),
                                      "env": a.env_text, "status": "ok", "note": "",
                                      "runs": []} for a in allocs}
    with tempfile.TemporaryDirectory(prefix="fitalloc-redis-") as tmp:
        log(f"Redis study: generating the loads ({size.keys1:,} + {size.keys2:,} SETs)")
        loads = [(os.path.join(tmp, "load1.resp"), size.keys1),
                 (os.path.join(tmp, "load2.resp"), size.keys2)]
        write_load(loads[0][0], 0, size.keys1, VALUE1)
        write_load(loads[1][0], size.keys1, size.keys2, VALUE2)
        measure(allocs, tools, tmp, reps, rows, lambda a: one_run(a, tools, size, loads, tmp),
                summarize, lambda r: (f"load {r['load_s']:.2f} s, used_memory "
                                      f"{r['used_memory'] / 2**20:.1f} MiB, "
                                      f"RSS {r['rss'] / 2**20:.1f} MiB, "
                                      f"PSS {r['pss'] / 2**20:.1f} MiB"), "Redis study", log)
    doc = {"scale": scale, "keys1": size.keys1, "value1": VALUE1, "keys2": size.keys2,
           "value2": VALUE2, "maxmemory": size.maxmemory, "pause_s": PAUSE_S,
           "sample_s": SAMPLE_S, "reps": reps, "server": tools.server,
           "version": server_version(tools), "rows": list(rows.values()), "plot": None,
           "plot_note": ""}
    if not draw:
        doc["plot_note"] = "not drawn (--no-plots)"
    else:
        doc["plot"], doc["plot_note"] = plot(doc, os.path.join(out_dir, "redis_memory.png"))
    doc["seconds"] = round(time.perf_counter() - t_start, 1)
    with open(os.path.join(out_dir, "redis.json"), "w") as f:
        json.dump(doc, f, indent=1)
    log(f"Redis study: {len(allocs)} allocators, {reps} reps in {doc['seconds']:.0f} s")
    return doc


def server_version(tools: Tools) -> str:
    res = subprocess.run([tools.server, "--version"], capture_output=True, text=True)
    m = re.search(r"v=(\S+)", res.stdout)
    return m.group(1) if m else "?"


def median_run(row: dict) -> dict | None:
    """The run whose PSS after the pause is the median of the allocator's (the lower one of
    an even count): the one drawn."""
    ok = sorted((r for r in row["runs"] if r["status"] == "ok" and r["samples"]),
                key=lambda r: r["pss"])
    return ok[(len(ok) - 1) // 2] if ok else None


def plot(doc: dict, path: str) -> tuple[str | None, str]:
    """RSS and PSS over time, one line per allocator; (file name, note)."""
    from . import plots

    why = plots.available()
    if why:
        return None, f"not drawn: {why}"
    lines = [(row["name"], median_run(row)) for row in doc["rows"]]
    lines = [(n, r) for n, r in lines if r is not None]
    if not lines:
        return None, "nothing to draw: no run passed"
    plt = plots._plt()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    mib = 2**20
    for ax, k, what in ((axes[0], 1, "RSS (VmRSS)"), (axes[1], 2, "PSS (smaps_rollup)")):
        for name, r in lines:
            ts = [s[0] for s in r["samples"]]
            ax.plot(ts, [s[k] / mib for s in r["samples"]], label=name, color=colour(name),
                    linewidth=1.2)
            # The end of the loads: the pause follows.
            end = min(r["samples"], key=lambda s: abs(s[0] - r["load_end_s"]))
            ax.plot([end[0]], [end[k] / mib], marker="o", color=colour(name), markersize=4)
        ax.axhline(doc["maxmemory"] / mib, color="black", linestyle="--", linewidth=0.8,
                   label="maxmemory")
        ax.set_title(f"{what}: loads, then a {doc['pause_s']:g} s pause")
        ax.set_xlabel("seconds since the first SET (dot: loads done)")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("MiB (lower is better)")
    axes[1].legend(fontsize="small")
    plots._save(fig, path)
    return os.path.basename(path), ""


def failures(doc: dict | None) -> list[str]:
    if not doc:
        return []
    return [f"{row['name']}: {row['note']}" for row in doc["rows"] if row["status"] == "FAILED"]


def _mib(n) -> str:
    return "-" if n is None else f"{n / 2**20:,.1f}"


def _ratio(v) -> str:
    return "-" if v is None else f"{v:.2f}"


HEADER = ["allocator", "load s", "used_memory MiB", "RSS MiB", "PSS MiB", "RSS / used",
          "PSS / used", "PSS vs jemalloc", "evicted keys", "runs"]


def table(doc: dict) -> list[str]:
    out = ["| " + " | ".join(HEADER) + " |", "|---|" + "---:|" * (len(HEADER) - 1)]
    base = next((row["median"]["pss"] for row in doc["rows"] if row["name"] == "jemalloc"
                 and row["median"] and row["median"]["pss"]), None)
    for row in doc["rows"]:
        m = row["median"]
        if row["status"] == "unusable" or not m or not m["ok"]:
            why = row["note"] or "no run passed"
            out.append(f"| {row['name']} | " + " | ".join(["-"] * (len(HEADER) - 2))
                       + f" | {why} |")
            continue
        vs = "-" if base is None else f"{(m['pss'] / base - 1) * 100:+.0f} %"
        runs = f"{m['ok']}" + ("" if m["ok"] == m["runs"] else f" of {m['runs']} (FAILED)")
        out.append("| " + " | ".join([
            row["name"], f"{m['load_s']:.2f}", _mib(m["used_memory"]), _mib(m["rss"]),
            _mib(m["pss"]), _ratio(m["rss_ratio"]), _ratio(m["pss_ratio"]), vs,
            f"{m['evicted_keys']:,.0f}", runs]) + " |")
    p = MESH_PAPER
    out.append(f"| Mesh (PLDI 2019, reported) | +{p['time'] * 100:.0f} % vs jemalloc | - | - | "
               f"- | ~{p['ratio']:.2f} | - | -{p['less_than_jemalloc'] * 100:.0f} % (RSS) | - "
               "| - |")
    return out


def section(doc: dict | None, skipped: str | None = None) -> list[str]:
    """report.md's lines for the study, or a line saying why it did not run."""
    out = [f"## {TITLE}", ""]
    if doc is None:
        return out + [f"{skipped or 'Redis study: not run'}.", ""]
    out += ["Mesh's Redis experiment (Powers et al., PLDI 2019, section 6): Debian's "
            f"redis-server {doc['version']} with `--maxmemory {doc['maxmemory']} "
            "--maxmemory-policy allkeys-lru`, one server per run under `LD_PRELOAD` of the "
            f"allocator, fed {doc['keys1']:,} SETs of {doc['value1']}-byte values, then "
            f"{doc['keys2']:,} of {doc['value2']}-byte values (`redis-cli --pipe`), so that "
            "keys of the first load are evicted at random; then a "
            f"{doc['pause_s']:g} s pause. RSS (VmRSS) and PSS (smaps_rollup) are read after "
            "the pause, `used_memory` (INFO: the bytes Redis holds, as the allocator's usable "
            "sizes) then too; RSS / used is the allocator's overhead on the heap eviction "
            "left. A page a meshing allocator maps at two addresses counts twice in RSS and "
            "once in PSS: PSS is the measure for `fitalloc-mesh` (`FITALLOC_MESH=1`). Load s: "
            "both loads, from the first SET sent to the last reply. Medians of "
            f"{doc['reps']} interleaved repetitions (scale {doc['scale']:g} of the paper's "
            f"sizes). glibc runs with a preload of its own libc.so.6: without it Redis, which "
            "Debian links with jemalloc, runs on jemalloc. The study took "
            f"{doc['seconds']:.0f} s. Files: `redis/`.", ""]
    out += table(doc)
    out += ["", "Mesh's published figure (last row): on this experiment Mesh used 39 % less "
            "memory than jemalloc, as much as Redis's own active defragmentation saved, for "
            "2 % more time; about 1.13x used_memory in these terms. Their machine, Redis "
            "and jemalloc were others; the ratios, not the MiB, compare."
            + (" The `mesh` row is Mesh itself, built from its sources here "
               "(`bash bench/support/build_mesh.sh`), on this machine's Redis."
               if any(row["name"] == "mesh" for row in doc["rows"]) else ""), ""]
    if doc.get("plot"):
        out += [f"![Redis: RSS and PSS over time](redis/{doc['plot']})", "",
                "RSS and PSS of the server every "
                f"{doc['sample_s'] * 1000:.0f} ms from the first SET, through both loads (a "
                "dot where they end) and the pause, per allocator (its run with the median "
                "PSS).", ""]
    elif doc.get("plot_note"):
        out += [f"No plot: {doc['plot_note']}.", ""]
    return out


def terminal_lines(doc: dict) -> list[str]:
    out = [f"\nRedis study ({doc['seconds']:.0f} s, scale {doc['scale']:g}, medians of "
           f"{doc['reps']}; report.md has the table and the plot):"]
    for row in doc["rows"]:
        m = row["median"]
        if row["status"] == "unusable" or not m or not m["ok"]:
            out.append(f"  {row['name']:<16} -  ({row['note'] or 'no run passed'})")
            continue
        out.append(f"  {row['name']:<16} load {m['load_s']:5.2f} s  used {_mib(m['used_memory'])}"
                   f" MiB  RSS {_mib(m['rss'])} MiB ({_ratio(m['rss_ratio'])}x)  PSS "
                   f"{_mib(m['pss'])} MiB ({_ratio(m['pss_ratio'])}x)")
    return out

"""The churning-server study (issue 36): Redis under a changing load for a fixed time.

Debian's redis-server, one process per run under LD_PRELOAD of the allocator (as the Redis
study starts it: redis_study's tools, binding check, environment and samplers), on a unix
socket with a maxmemory and LRU eviction, is driven round after round by `redis-benchmark -t
set,get` over a keyspace larger than the maxmemory fits, each round with another value size
(24-1500 bytes, the same sequence for every allocator). Eviction frees keys at random while
new values of another size arrive, so the heap churns between size classes for the whole run.

Measured per run: requests served per second (rounds completed before the deadline, times their
requests, over the time they took), the server's CPU seconds per million requests, and PSS
every SAMPLE_S seconds; PSS is summed up as the median of the samples of the run's second half
(the server is at its maxmemory by then) and the peak. A meshing allocator's cost shows as
fewer requests (its passes take CPU from the server), its gain as a lower PSS.

`bash tools/bench.sh --study server` runs it alone (not in the default run); --size gives its
duration and heap (SIZES), -a the allocators (fitalloc-mesh joins fitalloc), -r the
interleaved repetitions. Writes <results>/server/server.json and server_pss.png, and
report.md (its table).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass

from . import allocators as al
from . import redis_study as rs
from .palette import colour

COMMAND = "bash tools/bench.sh --study server"
VALUE_MIN, VALUE_MAX = 24, 1500
SAMPLE_S = 0.5
SEED = 36


@dataclass(frozen=True)
class Size:
    seconds: float  # rounds start until this time has passed since the first (at least one)
    maxmemory: int
    keyspace: int  # redis-benchmark -r: random keys, more than the maxmemory holds
    requests: int  # redis-benchmark -n: requests of each of SET and GET per round


SIZES = {
    # its first round evicts already, however slow the machine (the test checks evictions)
    "smoke": Size(5.0, 5 * 2**20, 40_000, 10_000),
    # issue 36's server: maxmemory 64mb, 200,000 keys of 24-1500 bytes (about 150 MB)
    "real": Size(60.0, 64 * 2**20, 200_000, 20_000),
    "full": Size(150.0, 64 * 2**20, 200_000, 20_000),
}


def value_sizes(count: int) -> list[int]:
    rng = random.Random(SEED)
    return [rng.randint(VALUE_MIN, VALUE_MAX) for _ in range(count)]


def cpu_seconds(pid: int) -> float | None:
    """utime + stime of a live process (/proc/PID/stat, fields 14 and 15)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def one_run(alloc: al.Allocator, tools: rs.Tools, bench: str, size: Size, tmp: str) -> dict:
    run = {"allocator": alloc.name, "status": "ok", "note": "", "rounds": 0, "requests": 0,
           "seconds": None, "rps": None, "cpu_s": None, "used_memory": None,
           "evicted_keys": None, "pss_median": None, "pss_peak": None, "samples": []}
    work = tempfile.mkdtemp(prefix="server-", dir=tmp)
    sock = os.path.join(work, "redis.sock")
    cmd = [tools.server, "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no",
           "--maxmemory", str(size.maxmemory), "--maxmemory-policy", "allkeys-lru",
           "--dir", work, "--logfile", os.path.join(work, "server.log")]
    with open(os.devnull, "wb") as null:
        proc = subprocess.Popen(cmd, env=rs.run_env(alloc, tools, work), stdin=null,
                                stdout=null, stderr=null, start_new_session=True)
    sampler = None
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    try:
        deadline = time.monotonic() + 10.0
        while not (os.path.exists(sock)
                   and rs.redis_cli(tools, sock, "ping").stdout.strip() == "PONG"):
            if proc.poll() is not None or time.monotonic() > deadline:
                run["status"], run["note"] = "FAILED", "redis-server did not start"
                return run
            time.sleep(0.05)
        t0 = time.perf_counter()
        sampler = rs.Sampler(proc.pid, t0, SAMPLE_S)
        sampler.start()
        sizes = iter(value_sizes(100_000))
        while run["rounds"] == 0 or time.perf_counter() - t0 < size.seconds:
            res = subprocess.run([bench, "-s", sock, "-t", "set,get", "-n", str(size.requests),
                                  "-r", str(size.keyspace), "-d", str(next(sizes)), "-q"],
                                 capture_output=True, text=True, errors="replace", env=env,
                                 timeout=max(60.0, size.seconds))
            if res.returncode != 0 or proc.poll() is not None:
                run["status"] = "FAILED"
                run["note"] = (f"redis-server died (exit {proc.returncode})"
                               if proc.poll() is not None else
                               f"redis-benchmark exit {res.returncode}: {res.stderr[-200:]}")
                return run
            run["rounds"] += 1
        run["seconds"] = round(time.perf_counter() - t0, 3)
        run["requests"] = run["rounds"] * 2 * size.requests
        run["rps"] = round(run["requests"] / run["seconds"])
        cpu = cpu_seconds(proc.pid)
        run["cpu_s"] = None if cpu is None else round(cpu, 2)
        info = rs.parse_info(rs.redis_cli(tools, sock, "info").stdout)
        run["used_memory"] = int(info.get("used_memory", "0"))
        run["evicted_keys"] = int(info.get("evicted_keys", "0"))
        return run
    except subprocess.TimeoutExpired as e:
        run["status"], run["note"] = "FAILED", f"{os.path.basename(e.cmd[0])} timed out"
        return run
    finally:
        if sampler is not None:
            sampler.stop()
            run["samples"] = sampler.samples
            late = [s[2] for s in sampler.samples if s[0] >= size.seconds / 2]
            if late:
                run["pss_median"] = int(statistics.median(late))
                run["pss_peak"] = max(s[2] for s in sampler.samples)
        rs.stop_server(proc)
        shutil.rmtree(work, ignore_errors=True)


def summarize(runs: list[dict]) -> dict:
    ok = [r for r in runs if r["status"] == "ok"]
    out = {"runs": len(runs), "ok": len(ok)}
    for k in ("rounds", "rps", "pss_median", "pss_peak", "evicted_keys"):
        out[k] = rs._median([r[k] for r in ok])
    out["cpu_per_m"] = rs._median([r["cpu_s"] / r["requests"] * 1e6 for r in ok
                                if r["cpu_s"] is not None and r["requests"]])
    return out


def run(out_root: str, tools: rs.Tools, bench: str, allocs: list[al.Allocator], size_name: str,
        reps: int, draw: bool, log) -> dict:
    out_dir = os.path.join(out_root, "server")
    os.makedirs(out_dir, exist_ok=True)
    size = SIZES[size_name]
    t_start = time.perf_counter()
    rows = {a.name: {"name": a.name, "env": a.env_text, "status": "ok", "note": "", "runs": []}
            for a in allocs}
    with tempfile.TemporaryDirectory(prefix="fitalloc-server-") as tmp:
        rs.measure(allocs, tools, tmp, reps, rows, lambda a: one_run(a, tools, bench, size, tmp),
                   summarize, lambda r: (f"{r['rounds']} rounds, {r['rps']:,} requests/s, "
                                         f"PSS {_mib(r['pss_median'])} MiB"),
                   "server study", log)
    doc = {"size": size_name, "seconds": size.seconds, "maxmemory": size.maxmemory,
           "keyspace": size.keyspace, "requests": size.requests, "sample_s": SAMPLE_S,
           "reps": reps, "version": rs.server_version(tools), "rows": list(rows.values()),
           "plot": None, "plot_note": "not drawn (--no-plots)"}
    if draw:
        doc["plot"], doc["plot_note"] = plot(doc, os.path.join(out_dir, "server_pss.png"))
    doc["took_s"] = round(time.perf_counter() - t_start, 1)
    with open(os.path.join(out_dir, "server.json"), "w") as f:
        json.dump(doc, f, indent=1)
    return doc


def plot(doc: dict, path: str) -> tuple[str | None, str]:
    """PSS over time, one line per allocator (its run with the median requests/s)."""
    from . import plots

    why = plots.available()
    if why:
        return None, f"not drawn: {why}"
    lines = []
    for row in doc["rows"]:
        ok = sorted((r for r in row["runs"] if r["status"] == "ok" and r["samples"]),
                    key=lambda r: r["rps"])
        if ok:
            lines.append((row["name"], ok[(len(ok) - 1) // 2]))
    if not lines:
        return None, "nothing to draw: no run passed"
    plt = plots._plt()
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for name, r in lines:
        ax.plot([s[0] for s in r["samples"]], [s[2] / 2**20 for s in r["samples"]], label=name,
                color=colour(name), linewidth=1.2)
    ax.axhline(doc["maxmemory"] / 2**20, color="black", linestyle="--", linewidth=0.8,
               label="maxmemory")
    ax.set_xlabel("seconds since the first round")
    ax.set_ylabel("PSS MiB (lower is better)")
    ax.set_title("A churning Redis: PSS over time")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    plots._save(fig, path)
    return os.path.basename(path), ""


def _mib(n) -> str:
    return "-" if n is None else f"{n / 2**20:,.1f}"


def table(doc: dict) -> list[str]:
    head = ["allocator", "rounds", "requests/s", "vs glibc", "CPU s per M requests",
            "PSS MiB (2nd half, median)", "PSS vs glibc", "PSS peak MiB", "runs"]
    out = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    glibc = next((r["median"] for r in doc["rows"] if r["name"] == "glibc" and r["median"]
                  and r["median"]["ok"]), None)
    for row in doc["rows"]:
        m = row["median"]
        if row["status"] == "unusable" or not m or not m["ok"]:
            out.append(f"| {row['name']} | " + " | ".join(["-"] * (len(head) - 2))
                       + f" | {row['note'] or 'no run passed'} |")
            continue
        rps = "-" if not glibc else f"{m['rps'] / glibc['rps']:.2f}"
        pss = "-" if not glibc or not glibc["pss_median"] or m["pss_median"] is None \
            else f"{m['pss_median'] / glibc['pss_median']:.2f}"
        cpu = "-" if m["cpu_per_m"] is None else f"{m['cpu_per_m']:.2f}"
        runs = f"{m['ok']}" + ("" if m["ok"] == m["runs"] else f" of {m['runs']} (FAILED)")
        out.append("| " + " | ".join([row["name"], f"{m['rounds']:g}", f"{m['rps']:,.0f}", rps,
                                      cpu, _mib(m["pss_median"]), pss, _mib(m["pss_peak"]),
                                      runs]) + " |")
    return out


def report(doc: dict, missing: list[str]) -> list[str]:
    lines = ["## A churning server (Redis under changing value sizes)", "",
             f"Debian's redis-server {doc['version']}, `--maxmemory {doc['maxmemory']} "
             "--maxmemory-policy allkeys-lru`, on a unix socket; rounds of `redis-benchmark -t "
             f"set,get -n {doc['requests']:,} -r {doc['keyspace']:,} -d SIZE`, SIZE drawn from "
             f"{VALUE_MIN}-{VALUE_MAX} bytes per round (the same sequence for every allocator), "
             f"until {doc['seconds']:g} s have passed; PSS every {doc['sample_s']:g} s. "
             f"Medians of {doc['reps']} interleaved repetitions (size {doc['size']}).", ""]
    lines += table(doc)
    lines += [f"- allocator {m}" for m in missing]
    if doc["plot"]:
        lines += ["", f"![PSS over time](server/{doc['plot']})"]
    else:
        lines += ["", f"No plot: {doc['plot_note']}."]
    lines += ["", f"`{COMMAND}`, {doc['took_s']:.0f} s; files in server/."]
    return lines


def failures(doc: dict) -> list[str]:
    return [f"{row['name']}: {row['note']}" for row in doc["rows"] if row["status"] == "FAILED"]


def main(args, ap, log, fitalloc_snapshot) -> int:
    """--study server: the study alone; report.md is its section."""
    if not args.results:
        ap.error("--study server needs --results (tools/bench.sh gives one)")
    tools, skipped = rs.locate()
    bench = shutil.which("redis-benchmark")
    if tools and not bench:
        skipped = ("server study skipped: redis-benchmark not found (Debian: apt-get install "
                   "redis-tools)")
    if skipped:
        log(skipped.replace("Redis study", "server study"))
        return 0
    wanted = [n.strip() for n in (args.alloc.split(",") if args.alloc else
              ["fitalloc", "glibc", "mimalloc", "jemalloc", "tcmalloc", "scudo"]) if n.strip()]
    found, missing = al.discover_peers(wanted, args.fitalloc, args.build_dir)
    for m in missing:
        log(m)
    snap = fitalloc_snapshot() if any(a.name in al.FITALLOC_VARIANTS for a in found) else None
    found = [al.Allocator(a.name, snap, a.env) if a.name in al.FITALLOC_VARIANTS else a
             for a in found]
    allocs = rs.study_allocators(found, args.build_dir)
    out_dir = os.path.abspath(args.results)
    doc = run(out_dir, tools, bench, allocs, args.size, args.reps, not args.no_plots, log)
    lines = report(doc, missing)
    with open(os.path.join(out_dir, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    for f in failures(doc):
        print(f"server study FAILED: {f}")
    return 1 if failures(doc) else 0

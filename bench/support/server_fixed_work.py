#!/usr/bin/env python3
"""The churning-server study's setup for a fixed number of rounds rather than a fixed time.

Counts, rather than a rate, for a loaded machine (records 053, 082, 098, 112): Debian's
redis-server under LD_PRELOAD of LIB (or "glibc": no preload), maxmemory 64 MB with LRU
eviction on a unix socket, and ROUNDS rounds of `redis-benchmark -t set,get -n 20000 -r 200000
-d SIZE` with the study's seeded value sizes (bench/harness/server_study.py). Prints one JSON
line: the server's CPU seconds per million requests, its main thread's CPU and page faults, its
other threads' CPU (the purge thread, which runs the mesher), its kernel mappings at the end,
the median PSS (MiB) of the samples taken every 0.5 s over the second half of the rounds, and
the mesher's counters (FITALLOC_STATS=json at exit).

usage: server_fixed_work.py LIB LABEL ROUNDS [NAME=VALUE ...]   (the server's environment)
e.g.   server_fixed_work.py build/libfitalloc.so mesh 20 FITALLOC_MESH=1
"""

import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

REQUESTS = 20_000  # of SET and of GET per round, as the study's real size
KEYSPACE = 200_000
SEED = 36  # the study's value sizes


def task_stat(pid: int, tid: int | None = None) -> tuple[float, int]:
    """CPU seconds (utime + stime) and minor page faults of a process or one of its threads."""
    path = f"/proc/{pid}/stat" if tid is None else f"/proc/{pid}/task/{tid}/stat"
    with open(path) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), int(fields[7])


def pss_mib(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def main() -> int:
    if len(sys.argv) < 4 or not sys.argv[3].isdigit() or int(sys.argv[3]) < 2:
        sys.stderr.write("usage: " + __doc__.split("usage: ")[1])
        return 2
    lib, label, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    for tool in ("redis-server", "redis-benchmark"):
        if not shutil.which(tool):
            sys.stderr.write(f"server_fixed_work: {tool} not found\n")
            return 2
    rng = random.Random(SEED)
    sizes = [rng.randint(24, 1500) for _ in range(rounds)]
    env = dict(os.environ, LC_ALL="C", FITALLOC_STATS="json")
    env.update(a.split("=", 1) for a in sys.argv[4:])
    if lib != "glibc":
        env["LD_PRELOAD"] = os.path.abspath(lib)
    client_env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    work = tempfile.mkdtemp(prefix="server-fixed-")
    sock = os.path.join(work, "redis.sock")
    err = open(os.path.join(work, "stderr"), "w+")
    server = subprocess.Popen(
        ["redis-server", "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no",
         "--maxmemory", str(64 << 20), "--maxmemory-policy", "allkeys-lru", "--dir", work],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
        start_new_session=True)
    samples: list[float] = []
    current = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.5):
            if current[0] >= rounds // 2 and (v := pss_mib(server.pid)) is not None:
                samples.append(v)

    try:
        deadline = time.monotonic() + 10
        while not os.path.exists(sock):
            if server.poll() is not None or time.monotonic() > deadline:
                sys.stderr.write("server_fixed_work: redis-server did not start\n")
                return 1
            time.sleep(0.05)
        sampler = threading.Thread(target=sample)
        sampler.start()
        for r, size in enumerate(sizes):
            current[0] = r
            subprocess.run(["redis-benchmark", "-s", sock, "-t", "set,get", "-n", str(REQUESTS),
                            "-r", str(KEYSPACE), "-d", str(size), "-q"],
                           env=client_env, capture_output=True, check=True, timeout=600)
        done.set()
        sampler.join()
        if not samples and (v := pss_mib(server.pid)) is not None:  # rounds shorter than 0.5 s
            samples.append(v)
        tids = sorted(int(t) for t in os.listdir(f"/proc/{server.pid}/task"))
        main_cpu, main_faults = task_stat(server.pid, tids[0])
        cpu, _ = task_stat(server.pid)
        with open(f"/proc/{server.pid}/maps") as f:
            mappings = sum(1 for _ in f)
    finally:
        done.set()
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait()
    err.seek(0)
    stats = {}
    for line in err:
        if line.startswith('{"fitalloc"'):
            stats = json.loads(line)["fitalloc"]
    err.close()
    shutil.rmtree(work, ignore_errors=True)
    print(json.dumps({
        "label": label, "cpu_s_per_M_requests": round(cpu / (rounds * 2 * REQUESTS) * 1e6, 3),
        "main_cpu_s": main_cpu, "other_threads_cpu_s": round(cpu - main_cpu, 2),
        "main_faults": main_faults, "mappings": mappings,
        "pss_mib": round(statistics.median(samples), 1) if samples else None,
        "mesh": {k: v for k, v in stats.items() if k.startswith("mesh")}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

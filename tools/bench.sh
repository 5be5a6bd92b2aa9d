#!/usr/bin/env bash
# The bench in one command:  bash tools/bench.sh [options]
#
# Installs what is missing (tools/deps.sh bench: when root or with password-less sudo), builds
# libfitalloc.so (cmake, Release, in build/) and the bench workloads, makes sure Python can draw
# plots (Debian's python3-matplotlib, else a venv with the pinned matplotlib of
# bench/requirements.txt), then runs the default suite: every workload under fitalloc, the
# lab configurations that fit it, glibc, jemalloc, tcmalloc and mimalloc (those installed),
# 3 interleaved repetitions, smoke size: about 5 minutes on 2 cores, with a progress bar; then
# the replay study (nine real programs traced, replayed under every policy, three of them drawn,
# and the fragmentation table: under a minute more). Prints the tables; writes
# bench/results/<timestamp>/ (report.md, runs.csv, figures.csv, runs.json, summary.json,
# plots/*.png, replay/, fragmentation/). docs/bench.md explains it all.
#
#   -w LIST          workloads or groups (stress, classic, issue12, ece650-fit, cs33): see --list
#   -a LIST          allocators: fitalloc mimalloc jemalloc tcmalloc glibc lab lab-<config>
#   -r N             repetitions (default 3)
#   --full           the studies' original sizes (long); --size smoke|real|full
#   --threads LIST   thread counts of the scaling sweep (default 1,2,4,8,16,32)
#   --out DIR        results directory (default bench/results/<timestamp>)
#   --lib PATH       use this libfitalloc.so instead of building one
#   --baseline PATH  another libfitalloc.so (a build of main), run as fitalloc-baseline in the
#                    same interleaved runs; --ref fitalloc-baseline gives ratios against it
#   --build-dir DIR  cmake build directory (default build/)
#   --bin-dir DIR    where the workloads are compiled (default bench/build/)
#   --no-install     never install anything (plots are skipped without matplotlib)
#   --list           list the workloads and allocators
#   --no-study       no replay study (-w leaves it out too; --study, --study-programs LIST add it)
#   --study fragmentation
#                    only the fragmentation study: the replay study's programs at a larger
#                    scale, the table and its plot, no timed runs (minutes)
#   --study programs only the timed real-program study: 13 Debian programs and start-up under
#                    every peer, interleaved, outputs checked against glibc's
#   --study server   only the churning-server study: Redis under redis-benchmark rounds of
#                    changing value sizes for a fixed time (--size), requests/s and PSS
# Anything else (--ref glibc, --timeout 120, ...) goes to bench/compare.py as is.
# Exit status: 0 all runs passed, 1 some run (or replay study step) FAILED, 2 usage or build error.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir="$root/build"
lib=""
out=""
reps=3
install=1
list=0
pass=()

usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; }
need_value() { [[ $# -ge 2 ]] || { echo "tools/bench.sh: $1 needs a value" >&2; exit 2; }; }

while (($#)); do
    case "$1" in
    -w | -a | --size | --threads | --ref | --timeout | --cc)
        need_value "$@"
        pass+=("$1" "$2")
        shift 2
        ;;
    -r | --reps) need_value "$@"; reps=$2; shift 2 ;;
    --out) need_value "$@"; out=$2; shift 2 ;;
    --lib) need_value "$@"; lib=$2; shift 2 ;;
    --build-dir) need_value "$@"; build_dir=$2; shift 2 ;;
    --bin-dir) need_value "$@"; pass+=(--build-dir "$2"); shift 2 ;;
    --full | --no-plots) pass+=("$1"); shift ;;
    --no-install) install=0; shift ;;
    --list) list=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) pass+=("$1"); shift ;;
    esac
done

say() { printf '== %s\n' "$*" >&2; }

# python_for_plots: a Python 3.9+ that can import matplotlib, or nothing.
python_for_plots() {
    local py
    for py in "${BENCH_PYTHON:-}" python3 /usr/bin/python3 "$root/bench/.venv/bin/python"; do
        [[ -n "$py" ]] && command -v "$py" >/dev/null 2>&1 || continue
        if "$py" -c 'import sys, matplotlib; sys.exit(sys.version_info < (3, 9))' 2>/dev/null; then
            echo "$py"
            return 0
        fi
    done
    return 1
}

# install_matplotlib: when Debian's package could not be installed, a venv with the pinned
# versions of bench/requirements.txt in bench/.venv.
install_matplotlib() {
    say "installing matplotlib into bench/.venv (pip, bench/requirements.txt)"
    python3 -m venv "$root/bench/.venv" >&2 &&
        "$root/bench/.venv/bin/pip" install -q -r "$root/bench/requirements.txt" >&2
}

if ((install)); then
    # On a fresh Debian machine (as root or with password-less sudo): the compilers, cmake,
    # matplotlib and the peer allocators.
    bash "$root/tools/deps.sh" bench --if-missing || exit 2
fi

if ! py=$(python_for_plots); then
    if ((install)) && install_matplotlib && py=$(python_for_plots); then
        :
    else
        py=$(command -v python3 || true)
        [[ -n "$py" ]] || { echo "tools/bench.sh: python3 not found" >&2; exit 2; }
        say "matplotlib is not available: the report will have no plots"
    fi
fi

if [[ -z "$lib" ]]; then
    say "building libfitalloc.so (Release) in $build_dir"
    gen=()
    if [[ ! -f "$build_dir/CMakeCache.txt" ]] && command -v ninja >/dev/null; then
        gen=(-G Ninja)
    fi
    cmake -S "$root" -B "$build_dir" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
        -DFITALLOC_SANITIZE= -DFITALLOC_OVERRIDE=ON >/dev/null ||
        { echo "tools/bench.sh: cmake configure failed" >&2; exit 2; }
    cmake --build "$build_dir" --target fitalloc fitalloc_secure >/dev/null ||
        { echo "tools/bench.sh: building libfitalloc.so failed" >&2; exit 2; }
    lib="$build_dir/libfitalloc.so"
fi

compare=("$py" "$root/bench/compare.py" --fitalloc "$lib")
if ((list)); then
    exec "${compare[@]}" --list
fi
[[ -n "$out" ]] || out="$root/bench/results/$(date +%Y%m%d-%H%M%S)"
say "running the bench (results: $out)"
exec "${compare[@]}" -r "$reps" --results "$out" "${pass[@]}"

#!/usr/bin/env bash
# Long libFuzzer runs, outside CI:  bash tools/fuzz.sh DURATION [--all | NAME...]
#
# Builds build-fuzz/ the way tools/test.sh stage (e) does (clang-14 or $FUZZ_CC, ASan+UBSan,
# -DFITALLOC_FUZZ=ON), then runs fuzz targets for DURATION each (libFuzzer -max_total_time):
# 20s, 10m, 2h or plain seconds. The configurations are the CTest fuzz tests of
# tests/fuzz/fuzz.cmake (target, environment, flags), with -max_total_time instead of a fixed
# -runs count and no fixed seed:
#   (default)  one per target: the first test of each (fast, lab-first-tree, threads-fast, trace)
#   --all      every fuzz test (each lab policy and variant, each lock mode of fuzz_threads)
#   NAME...    the tests named (as in `ctest -L fuzz`, without "fuzz/": lab-best-list, ...)
# Each configuration keeps its corpus in build-fuzz/fuzz-runs/<name>/corpus (it grows from run to
# run; the committed tests/fuzz/corpus is only read) and saves a failing input (crash-*,
# timeout-*, oom-*, leak-*) in build-fuzz/fuzz-runs/<name>/; the end of the output lists them
# with the command to run each again. Exit status 1 if any configuration failed.
# FUZZ_BUILD_DIR overrides build-fuzz (relative to the source tree, or absolute).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/help.sh"

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

usage() { script_help "${BASH_SOURCE[0]}" "${1:-0}"; }
[[ $# -ge 1 ]] || usage 2
case "$1" in -h | --help) usage 0 ;; esac
if [[ "$1" =~ ^([0-9]+)(s|m|h)?$ ]]; then
    seconds=${BASH_REMATCH[1]}
    case "${BASH_REMATCH[2]}" in m) seconds=$((seconds * 60)) ;; h) seconds=$((seconds * 3600)) ;; esac
else
    echo "tools/fuzz.sh: DURATION must be like 20s, 10m, 2h or a number of seconds, not '$1'" >&2
    exit 2
fi
((seconds > 0)) || { echo "tools/fuzz.sh: DURATION must be more than 0" >&2; exit 2; }
shift
all=0
names=()
for arg in "$@"; do
    case "$arg" in
    --all) all=1 ;;
    -h | --help) usage 0 ;;
    -*) echo "tools/fuzz.sh: unknown option $arg" >&2; usage 2 ;;
    *) names+=("${arg#fuzz/}") ;;
    esac
done

build_dir=${FUZZ_BUILD_DIR:-build-fuzz}
[[ "$build_dir" == /* ]] || build_dir="$root/$build_dir"
export FITALLOC_TEST_SIZE=${FITALLOC_TEST_SIZE:-smoke}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# ---- the build, as tools/test.sh stage (e) ----
bash "$root/tools/deps.sh" test --if-missing || exit 1
for tool in cmake ctest ninja python3; do
    command -v "$tool" >/dev/null || { echo "tools/fuzz.sh: $tool not found" >&2; exit 1; }
done
fuzz_cc=${FUZZ_CC:-$(command -v clang-14 || command -v clang || true)}
[[ -n "$fuzz_cc" ]] || { echo "tools/fuzz.sh: clang not found (apt-get install clang-14)" >&2; exit 1; }
fuzz_args=(-DCMAKE_C_COMPILER="$fuzz_cc")
fuzz_cxx=${fuzz_cc/clang/clang++}
command -v "$fuzz_cxx" >/dev/null && fuzz_args+=(-DCMAKE_CXX_COMPILER="$fuzz_cxx")
scratch=$(mktemp -d "${TMPDIR:-/tmp}/fitalloc-fuzz.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' >"$scratch/probe.c"
{ "$fuzz_cc" -fsanitize=fuzzer,address,undefined -o "$scratch/probe" "$scratch/probe.c" &&
    "$scratch/probe" -runs=10; } >"$scratch/probe.log" 2>&1 || {
    cat "$scratch/probe.log" >&2
    echo "tools/fuzz.sh: $fuzz_cc cannot build and run a -fsanitize=fuzzer program (libFuzzer" \
        "comes with libclang-rt-14-dev: apt-get install clang-14 libclang-rt-14-dev)" >&2
    exit 1
}
cmake -S "$root" -B "$build_dir" -G Ninja -DFITALLOC_TEST_SIZE="$FITALLOC_TEST_SIZE" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFITALLOC_FUZZ=ON -DFITALLOC_TESTS=OFF "${fuzz_args[@]}" \
    >"$scratch/configure.log" || { cat "$scratch/configure.log" >&2; echo "tools/fuzz.sh: configuring $build_dir failed" >&2; exit 1; }
cmake --build "$build_dir" || { echo "tools/fuzz.sh: building $build_dir failed" >&2; exit 1; }

# ---- the configurations: CTest's fuzz tests, one line each ----
# name <TAB> target <TAB> corpus <TAB> flags (\x1f-separated) <TAB> environment (\x1f-separated)
ctest --test-dir "$build_dir" -L fuzz --show-only=json-v1 >"$scratch/tests.json" ||
    { echo "tools/fuzz.sh: ctest cannot list the fuzz tests of $build_dir" >&2; exit 1; }
python3 - "$scratch/tests.json" >"$scratch/configs.tsv" <<'PYEOF'
import json, sys
for t in json.load(open(sys.argv[1]))["tests"]:
    cmd = t["command"]  # bash run_fuzz.sh <target> <work-dir> <corpus> <flags...>
    env = []
    for p in t.get("properties", []):
        if p["name"] == "ENVIRONMENT":
            env = p["value"]
    flags = [f for f in cmd[5:] if not f.startswith(("-runs=", "-seed="))]
    name = t["name"].split("/", 1)[1]
    print("\t".join([name, cmd[2], cmd[4], "\x1f".join(flags), "\x1f".join(env)]))
PYEOF

declare -A seen_target=() known=()
selected=()
while IFS=$'\t' read -r name target corpus flags env; do
    known[$name]=1
    if ((all)); then
        selected+=("$name")
    elif ((${#names[@]} == 0)); then
        [[ -n "${seen_target[$target]:-}" ]] || selected+=("$name")
    fi
    seen_target[$target]=1
done <"$scratch/configs.tsv"
for n in "${names[@]}"; do
    [[ -n "${known[$n]:-}" ]] || {
        echo "tools/fuzz.sh: no fuzz test '$n'; there are: $(cut -f1 "$scratch/configs.tsv" | tr '\n' ' ')" >&2
        exit 2
    }
    selected+=("$n")
done

runs_dir="$build_dir/fuzz-runs"
echo "tools/fuzz.sh: ${#selected[@]} configuration(s), ${seconds}s each: ${selected[*]}"
echo "tools/fuzz.sh: corpora and failing inputs are saved in $runs_dir/<name>/"
failed=()
reports=()
for want in "${selected[@]}"; do
    while IFS=$'\t' read -r name target corpus flags env; do
        [[ "$name" == "$want" ]] || continue
        IFS=$'\x1f' read -r -a flag_list <<<"$flags"
        IFS=$'\x1f' read -r -a env_list <<<"$env"
        dir="$runs_dir/$name"
        mkdir -p "$dir/corpus"
        echo
        echo "==== $name: $(basename "$target") ${env_list[*]} for ${seconds}s (corpus $dir/corpus)"
        touch "$dir/.start"
        rm -f "$dir/.rc"
        # The whole output goes to the log; the terminal gets libFuzzer's pulses and any error.
        (
            rc=0
            env "${env_list[@]}" "$target" -artifact_prefix="$dir/" -max_total_time="$seconds" \
                "${flag_list[@]}" "$dir/corpus" "$corpus" </dev/null 2>&1 || rc=$?
            echo "$rc" >"$dir/.rc"
        ) | tee "$dir/last-run.log" | {
            grep -E --line-buffered \
                '^(#[0-9]+[[:space:]]+(pulse|DONE)|==[0-9]+==ERROR|SUMMARY|fuzz|stat::|Test unit)' ||
                true
        }
        rc=$(cat "$dir/.rc" 2>/dev/null || echo 1)
        if ((rc != 0)); then
            failed+=("$name")
            for input in "$dir"/crash-* "$dir"/timeout-* "$dir"/oom-* "$dir"/leak-*; do
                [[ -e "$input" && "$input" -nt "$dir/.start" ]] || continue
                reports+=("$name: $input" "    run it again: ${env_list[*]} $target $input")
            done
            echo "==== $name: FAILED (exit $rc; log $dir/last-run.log)"
        else
            echo "==== $name: ok (log $dir/last-run.log)"
        fi
    done <"$scratch/configs.tsv"
done

echo
if ((${#failed[@]})); then
    echo "tools/fuzz.sh: ${#failed[@]} of ${#selected[@]} failed: ${failed[*]}"
    echo "tools/fuzz.sh: failing inputs (in $runs_dir/<name>/):"
    printf '  %s\n' "${reports[@]}"
    exit 1
fi
echo "tools/fuzz.sh: all ${#selected[@]} ok; no crash (crashes would be saved in $runs_dir/<name>/)"

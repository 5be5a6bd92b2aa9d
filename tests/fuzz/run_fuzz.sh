#!/usr/bin/env bash
# Run one libFuzzer target for CTest (tests/fuzz/fuzz.cmake):
#   bash run_fuzz.sh <target> <work-dir> <corpus-dir> <libFuzzer flags...>
# The work dir is made anew, so every run starts from the same inputs. New inputs go to
# <work-dir>/corpus (the committed corpus is only read), a failing input to <work-dir>/crash-*
# (or timeout-*, oom-*, leak-*): this script then says how to run it again.
set -euo pipefail
target=$1 work=$2 corpus=$3
shift 3
rm -rf "$work"
mkdir -p "$work/corpus"
rc=0
"$target" -artifact_prefix="$work/" "$@" "$work/corpus" "$corpus" || rc=$?
if ((rc != 0)); then
    env_vars=$(env | grep -E '^FITALLOC_' | sort | tr '\n' ' ' || true)
    for input in "$work"/crash-* "$work"/timeout-* "$work"/oom-* "$work"/leak-*; do
        [[ -e "$input" ]] || continue
        echo "run_fuzz.sh: the failing input is $input; run it again with:" >&2
        echo "  ${env_vars}$target $input" >&2
    done
fi
exit "$rc"

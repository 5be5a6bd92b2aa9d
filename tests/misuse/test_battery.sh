#!/usr/bin/env bash
# The misuse battery as a test: every case of tools/misuse.sh under fitalloc's default, secure
# and lab configurations must give the outcome tests/misuse/expected.tsv records (glibc and
# scudo are not run here: tools/misuse.sh shows them). Then secure mode's catches that random
# placement could touch (overflows, underflows, single stores, writes after free, stale
# contents: which block comes before or after a block is random there) run 20 times each: every
# run must give the expected outcome (one that differs shows as mixed:... and fails).
#   bash tests/misuse/test_battery.sh      (ctest: misuse/battery; needs FITALLOC_LIB)
# Exits 77 (skipped) when FITALLOC_LIB has no malloc to preload (FITALLOC_OVERRIDE=OFF).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
: "${FITALLOC_LIB:?FITALLOC_LIB is not set (the path of libfitalloc.so)}"
[[ -f "$FITALLOC_LIB" ]] || { echo "FAIL: FITALLOC_LIB=$FITALLOC_LIB does not exist" >&2; exit 1; }

if command -v nm >/dev/null && ! nm -D --defined-only "$FITALLOC_LIB" | grep -qE ' T malloc$'; then
    echo "misuse/battery: $FITALLOC_LIB does not export malloc (no interposition layer): skipped"
    exit 77
fi

bin=$(mktemp -d "${TMPDIR:-/tmp}/fitalloc-battery.XXXXXX")
trap 'rm -rf "$bin"' EXIT
bash "$root/tools/misuse.sh" --lib "$FITALLOC_LIB" --check "$here/expected.tsv" --bin "$bin" \
    --configs default,secure,lab
bash "$root/tools/misuse.sh" --lib "$FITALLOC_LIB" --check "$here/expected.tsv" --bin "$bin" \
    --configs secure --repeat 20 --only '^(overflow|underflow|store|write-after-free|stale|freed-all-zero|memcpy-into)'

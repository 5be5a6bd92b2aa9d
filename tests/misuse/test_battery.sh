#!/usr/bin/env bash
# The misuse battery as a test: every case of tools/misuse.sh under fitalloc's default, secure
# and lab configurations must give the outcome tests/misuse/expected.tsv records (the glibc
# column is printed, not asserted).
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

bash "$root/tools/misuse.sh" --lib "$FITALLOC_LIB" --check "$here/expected.tsv"

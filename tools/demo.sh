#!/usr/bin/env bash
# The main job until the bench lands: build fitalloc, run a real program (sort of a large
# generated file) under it by LD_PRELOAD, check the output matches the system allocator's,
# and print fitalloc's statistics for that run (sort's alone).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build >/dev/null
work=$(mktemp -d "${TMPDIR:-/tmp}/fitalloc-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT
python3 -c '
import random
random.seed(1)
with open("'"$work"'/input.txt", "w") as f:
    for i in range(400000):
        f.write("%08x %s\n" % (random.getrandbits(32), "x" * random.randrange(1, 60)))
'
echo "== sort of 400 000 lines with glibc malloc"
/usr/bin/time -f "   %e s, peak RSS %M KiB" sort "$work/input.txt" >"$work/glibc.txt"
echo "== the same under fitalloc (LD_PRELOAD=build/libfitalloc.so FITALLOC_STATS=1 FITALLOC_ONLY=sort)"
# FITALLOC_ONLY: the statistics of sort alone, not of /usr/bin/time, which runs under fitalloc too.
FITALLOC_STATS=1 FITALLOC_ONLY=sort LD_PRELOAD="$root/build/libfitalloc.so" \
    /usr/bin/time -f "   %e s, peak RSS %M KiB" sort "$work/input.txt" >"$work/fitalloc.txt"
cmp "$work/glibc.txt" "$work/fitalloc.txt"
echo "== outputs identical"

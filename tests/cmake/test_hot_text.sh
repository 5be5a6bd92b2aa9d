#!/usr/bin/env bash
# ctest labels: symbols
# libfitalloc.so links the functions a default-mode program runs (cmake/hot-text.txt) first and
# together, the rest of the code in a segment of its own, and has no DT_FINI
# (cmake/hot-text.cmake): the functions of the list lie in one stretch of the code no longer than
# they are, and a program that makes the usual allocation calls (hot_text.c) runs none of the code
# after it; nor does it read the segment of .rodata and .eh_frame: what the default mode reads is
# in .data.rel.ro (FA_STARTUP_CONST, src/platform/compiler.h). hot_text.c makes both inaccessible
# and fails at the first call or read there: a function of the default mode missing from the list
# (tools/hot-text.sh makes it again) shows so. And the small zero-initialised variables lie
# together, before the large arrays (FA_BSS_APART).
# Usage: test_hot_text.sh [path/to/libfitalloc.so]  (default: $FITALLOC_LIB)
set -euo pipefail

lib=${1:-${FITALLOC_LIB:-}}
src=${FITALLOC_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
[[ -n "$lib" && -f "$lib" ]] || { echo "FAIL: FITALLOC_LIB is not set or missing" >&2; exit 1; }
command -v nm >/dev/null && command -v readelf >/dev/null ||
    { echo "FAIL: nm or readelf not found (binutils)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The stretch of the listed functions (addresses), and their total size.
declare -A hot=()
while read -r name; do hot[$name]=1; done < <(grep -v '^#' "$src/cmake/hot-text.txt")
lo=-1 hi=0 total=0
while read -r addr size type name; do
    [[ $type == [tT] && -n ${hot[$name]:-} ]] || continue
    a=$((16#$addr)) s=$((16#$size))
    total=$((total + s))
    ((lo < 0 || a < lo)) && lo=$a
    ((a + s > hi)) && hi=$((a + s))
done < <(nm -S --defined-only "$lib")
((lo >= 0)) || { echo "FAIL: none of cmake/hot-text.txt's functions in $lib" >&2; exit 1; }
# Besides the listed functions: the constructors, destructors and the C runtime's bits placed
# with them, and alignment.
if ((hi - lo > total + 16384)); then
    printf 'FAIL: the listed functions (%d bytes) spread over %d bytes of %s\n' \
        "$total" $((hi - lo)) "$lib" >&2
    exit 1
fi
if readelf -d "$lib" | grep -q '(FINI)'; then
    echo "FAIL: $lib has a DT_FINI (cmake/hot-text.cmake: -fini)" >&2
    exit 1
fi
# The zero-initialised variables every process writes come before the large arrays
# (FA_BSS_APART): no variable of under 512 bytes after one of 4 KiB or more.
big=""
while read -r addr size type name; do
    [[ $type == [bB] ]] || continue
    if ((16#$size >= 4096)); then
        big=${big:-$name}
    elif [[ -n $big ]] && ((16#$size < 512)); then
        echo "FAIL: .bss: $name ($((16#$size)) bytes) after the large array $big" \
            "(FA_BSS_APART, src/platform/compiler.h)" >&2
        exit 1
    fi
done < <(nm -nS --defined-only "$lib")
# Addresses to file offsets, by the executable segment. The rest of the code is in a segment
# of its own: the listed functions end their segment.
read -r seg_off seg_vaddr seg_size < <(readelf -lW "$lib" |
    awk '$1 == "LOAD" && / R E / { print $2, $3, $5; exit }')
seg_off=$((seg_off)) seg_vaddr=$((seg_vaddr)) seg_size=$((seg_size))
if ((seg_vaddr + seg_size > hi + 64)); then
    printf 'FAIL: %d bytes of code after the listed functions in their segment of %s\n' \
        $((seg_vaddr + seg_size - hi)) "$lib" >&2
    exit 1
fi
end=$((hi - seg_vaddr + seg_off))
rodata=$(readelf -SW "$lib" | sed 's/^ *\[ *[0-9]*\] *//' | awk '$1 == ".rodata" { print $4 }')
[[ -n "$rodata" ]] || { echo "FAIL: no .rodata in $lib" >&2; exit 1; }
rodata=$((16#$rodata))

# The heap profiler's segments (.text.profile, .rodata.profile): file offsets [prof_from, prof_to).
read -r prof_from prof_to < <(readelf -lW "$lib" | awk '
    /^ +[A-Z_]+ +0x/ { n++; off[n] = $2; size[n] = $5 } # every program header, numbered from 1
    /^ *[0-9]+ +\.text\.profile *$/ { t = $1 + 1 } /^ *[0-9]+ +\.rodata\.profile *$/ { r = $1 + 1 }
    END { if (t && r == t + 1) print off[t], off[r], size[r] }')
if [[ -z "$prof_from" ]]; then
    echo "FAIL: no segments .text.profile and .rodata.profile, in that order, in $lib" >&2
    exit 1
fi
prof_to=$((${prof_to% *} + ${prof_to#* }))

"${CC:-cc}" -O2 -pthread -fno-builtin -o "$work/hot_text" "$(dirname "$0")/hot_text.c"
# Runs hot_text with `env` before it and its fences' arguments after; on a fault, says where.
fenced() {
    local what=$1 status=0
    shift
    "$@" >"$work/out" || status=$?
    ((status == 0)) && return 0
    echo "FAIL: $what: status $status:" >&2
    cat "$work/out" >&2
    # The function that ran there: the offset in the file, by its segment, to an address.
    local at
    at=$(sed -n 's/.*code run at file offset \(0x[0-9a-f]*\).*/\1/p' "$work/out")
    if [[ -n "$at" ]]; then
        local off vaddr size
        while read -r off vaddr size; do
            if ((at >= off && at < off + size)); then
                at=$((at - off + vaddr))
                break
            fi
        done < <(readelf -lW "$lib" | awk '$1 == "LOAD" { print $2, $3, $5 }')
        nm -n --defined-only "$lib" | while read -r addr type name; do
            ((16#$addr <= at)) || break
            echo "$name"
        done | tail -n 1 | sed 's/^/in: /' >&2
    fi
    exit 1
}
# A clean environment: a FITALLOC_* variable (the test's own) makes the options' names read.
fenced "listed code up to file offset $end" \
    env -i LD_PRELOAD="$lib" "$work/hot_text" "$end" "$rodata"
# Profiled, sampling often: the profiler's segments are all it runs and reads beyond the
# default mode's code (its files written at exit and by the fork's child included).
fenced "profiled, code beyond file offset $end outside the profiler's segments" \
    env -i LD_PRELOAD="$lib" FITALLOC_PROFILE="$work/p" FITALLOC_PROFILE_RATE=4K \
    "$work/hot_text" "$end" "$rodata" "$prof_from" "$prof_to"
if ! ls "$work"/p.*.peak.heap >/dev/null 2>&1; then
    echo "FAIL: the profiled run wrote no profile" >&2
    exit 1
fi
printf 'ok: %d bytes of listed functions in %d bytes, nothing beyond them run, nothing of\n' \
    "$total" $((hi - lo))
echo "    .rodata read; profiled, nothing beyond the profiler's segments"

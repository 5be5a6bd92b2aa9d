#!/usr/bin/env bash
# ctest labels: symbols
# libfitalloc.so carries its relative relocations packed (DT_RELR): the static empty heap's
# thousand slots that point at the empty page would otherwise be a thousand 24-byte entries,
# 26 KiB of the file that the loader reads, and so keeps resident, in every process.
# Usage: test_relocations.sh [path/to/libfitalloc.so]  (default: $FITALLOC_LIB)
set -euo pipefail

lib=${1:-${FITALLOC_LIB:-}}
[[ -n "$lib" ]] || { echo "FAIL: FITALLOC_LIB is not set" >&2; exit 1; }
[[ -f "$lib" ]] || { echo "FAIL: $lib does not exist" >&2; exit 1; }
command -v readelf >/dev/null || { echo "FAIL: readelf not found (binutils)" >&2; exit 1; }

if ! readelf -d "$lib" | grep -q '(RELR)'; then
    # Only a linker without the option excuses it (binutils before 2.38; 2.40 for aarch64
    # accepts it with a warning and ignores it).
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    echo 'int fa_probe;' >"$tmp/probe.c"
    flags=(-shared -fPIC -Wl,--fatal-warnings,-z,pack-relative-relocs)
    if "${CC:-cc}" "${flags[@]}" -o "$tmp/probe.so" "$tmp/probe.c" 2>/dev/null; then
        echo "FAIL: $lib has no DT_RELR, though the linker packs relative relocations" >&2
        exit 1
    fi
    echo "ok: the linker cannot pack relative relocations (no -z pack-relative-relocs)"
    exit 0
fi
# Relative relocations left in .rela.dyn (those RELR cannot express: odd addresses).
plain=$(readelf -rW "$lib" | grep -c '_RELATIVE' || true)
if ((plain > 64)); then
    echo "FAIL: $plain relative relocations outside DT_RELR in $lib" >&2
    exit 1
fi
size_hex=$(readelf -SW "$lib" | sed 's/^ *\[ *[0-9]*\] *//' | awk '$1 == ".rela.dyn" { print $5 }')
rela=$((16#${size_hex:-0}))
if ((rela > 4096)); then
    echo "FAIL: .rela.dyn is $rela bytes (packed relocations expected: under 4 KiB)" >&2
    exit 1
fi
echo "ok: DT_RELR, $plain relative relocations left, .rela.dyn $rela bytes"

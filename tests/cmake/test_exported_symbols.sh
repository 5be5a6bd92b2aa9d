#!/usr/bin/env bash
# ctest labels: symbols
# libfitalloc.so and libfitalloc-secure.so export the allocator API and nothing else:
#   - the C library allocation functions they replace (malloc, free, ..., __libc_*),
#   - names starting with fa_,
#   - C++ operator new/delete (manglings matching ^_Z(nw|na|dl|da)),
#   - libfitalloc-secure.so only, and always: memcpy, memmove, memset and their __*_chk forms
#     (secure mode's checked copies); libfitalloc.so leaves every program's copies alone.
# Usage: test_exported_symbols.sh [libfitalloc.so [libfitalloc-secure.so]]
#        (default: $FITALLOC_LIB and $FITALLOC_SECURE_LIB)
set -euo pipefail
command -v nm >/dev/null || { echo "FAIL: nm not found (binutils)" >&2; exit 1; }

copies=(memcpy memmove memset __memcpy_chk __memmove_chk __memset_chk)

# check LIB SECURE: 0 if LIB exports what it must and nothing else.
check() {
local lib=$1 secure=$2
[[ -n "$lib" ]] || { echo "FAIL: the library's path is not set" >&2; return 1; }
[[ -f "$lib" ]] || { echo "FAIL: $lib does not exist" >&2; return 1; }
allowed_c=(
    malloc free calloc realloc reallocarray aligned_alloc posix_memalign memalign
    valloc pvalloc malloc_usable_size free_sized free_aligned_sized
    __libc_malloc __libc_free __libc_calloc __libc_realloc __libc_memalign
    __libc_valloc __libc_pvalloc
)
required=(malloc free fa_malloc _Znwm _ZdlPv)
if ((secure)); then
    allowed_c+=("${copies[@]}")
    required+=("${copies[@]}")
fi
# Defined by the linker or the C runtime in every shared object, not by our code.
ignored=(_init _fini _edata _end __bss_start)

local -A is_allowed=() is_ignored=()
for s in "${allowed_c[@]}"; do is_allowed[$s]=1; done
for s in "${ignored[@]}"; do is_ignored[$s]=1; done

listing=$(nm -D --defined-only "$lib") || { echo "FAIL: nm -D failed on $lib" >&2; return 1; }

local -A exported=()
bad=()
while read -r -a f; do
    # "<value> <type> <name>", or "<type> <name>" for symbols without a value.
    ((${#f[@]} >= 2)) || continue
    type=${f[-2]}
    name=${f[-1]%%@*} # nm prints versioned names as name@VERSION or name@@VERSION
    [[ "$type" == "A" ]] && continue # version nodes
    [[ -n "${is_ignored[$name]:-}" ]] && continue
    exported[$name]=1
    if [[ -n "${is_allowed[$name]:-}" || "$name" == fa_* || "$name" =~ ^_Z(nw|na|dl|da) ]]; then
        continue
    fi
    bad+=("$type $name")
done <<<"$listing"

missing=()
for s in "${required[@]}"; do
    [[ -n "${exported[$s]:-}" ]] || missing+=("$s")
done

status=0
if ((${#bad[@]})); then
    echo "FAIL: $lib exports ${#bad[@]} symbol(s) outside the allocator API" \
        "(give them hidden visibility or make them static):" >&2
    printf '  %s\n' "${bad[@]}" >&2
    status=1
fi
if ((${#missing[@]})); then
    echo "FAIL: $lib does not export: ${missing[*]}" >&2
    status=1
fi
if ((status == 0)); then
    echo "ok: $lib: ${#exported[@]} exported symbols, all part of the allocator API"
fi
return $status
}

status=0
check "${1:-${FITALLOC_LIB:-}}" 0 || status=1
check "${2:-${FITALLOC_SECURE_LIB:-}}" 1 || status=1
exit $status

#!/usr/bin/env bash
# callgrind_pair.sh: instructions per malloc+free pair, per allocator and size.
#
# For every allocator (same discovery as compare.py) and every size, runs
#   valgrind --tool=callgrind ./pair <size> N        and   ... 2N
# under LD_PRELOAD=<allocator> (callgrind does not replace malloc, unlike
# memcheck/massif, so the preloaded allocator is what runs), and the same for
# `./pair 16 N --baseline` / 2N (the identical loop with do-nothing stand-ins).
#   per iteration  = (Ir(2N) - Ir(N)) / N          (start-up cost cancels)
#   per pair       = per iteration(size) - per iteration(baseline)
# Counts are deterministic, so one run of each is enough.
# --atomics counts atomic (bus-locking) instructions instead of all instructions
# (callgrind --collect-bus=yes, event Ge): e.g. what the lab's lock modes cost.
# --hold keeps one block of the same size live during the loop (pair --hold),
# so the loop's block never leaves its page empty: allocators that retire an
# empty page on free (mimalloc) show their steady-state fast path then.
#
# usage: bench/callgrind_pair.sh [-a alloc,alloc] [-s "16 32 64"] [-n N] [--hold] [--atomics]
#                                [--fitalloc PATH] [--build-dir DIR] [--keep DIR]
set -euo pipefail
source "$(dirname "$0")/../tools/lib/help.sh"

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ALLOCS=""
SIZES="16 32 64 128 512 1024"
N=100000
FITALLOC="$HERE/../build/libfitalloc.so"
BUILD_DIR="$HERE/build"
KEEP=""
HOLD=()
EVENT=Ir

usage() { script_help "$0" "${1:-0}"; }

while [ $# -gt 0 ]; do
    case "$1" in
        -a|--alloc) ALLOCS="$2"; shift 2 ;;
        -s|--sizes) SIZES="$2"; shift 2 ;;
        -n|--iterations) N="$2"; shift 2 ;;
        --fitalloc) FITALLOC="$2"; shift 2 ;;
        --build-dir) BUILD_DIR="$2"; shift 2 ;;
        --keep) KEEP="$2"; shift 2 ;;
        --hold) HOLD=(--hold); shift ;;
        --atomics) EVENT=Ge; shift ;;
        -h|--help) usage 0 ;;
        *) echo "callgrind_pair.sh: unknown argument '$1'" >&2; usage 2 >&2 ;;
    esac
done
case "$N" in ''|*[!0-9]*) echo "callgrind_pair.sh: -n needs a positive integer" >&2; exit 2 ;; esac
for s in $SIZES; do
    case "$s" in ''|*[!0-9]*|0) echo "callgrind_pair.sh: bad size '$s'" >&2; exit 2 ;; esac
done
command -v valgrind >/dev/null || { echo "callgrind_pair.sh: valgrind not found (apt-get install valgrind)" >&2; exit 2; }

# Build, and discover allocators (name, preload, settings), exactly as compare.py does.
python3 "$HERE/compare.py" --build-only --build-dir "$BUILD_DIR" >/dev/null 2>&1 \
    || python3 "$HERE/compare.py" --build-only --build-dir "$BUILD_DIR"
list_args=(--list-allocs --fitalloc "$FITALLOC")
[ -n "$ALLOCS" ] && list_args+=(--alloc "$ALLOCS")
mapfile -t FOUND < <(python3 "$HERE/compare.py" "${list_args[@]}")
[ ${#FOUND[@]} -gt 0 ] || { echo "callgrind_pair.sh: no allocator found" >&2; exit 2; }

PAIR="$BUILD_DIR/pair"
WORK="${KEEP:-$(mktemp -d /tmp/callgrind-pair.XXXXXX)}"
mkdir -p "$WORK"
[ -n "$KEEP" ] || trap 'rm -rf "$WORK"' EXIT

# ir <alloc> <preload|-> <tag> <pair args...>: total Ir of one callgrind run
# (with the allocator's settings, $SETTINGS, e.g. FITALLOC_MODE=lab for the lab configurations).
ir() {
    local alloc="$1" preload="$2" tag="$3"; shift 3
    local out="$WORK/$alloc.$tag.cg" log="$WORK/$alloc.$tag.log" total
    local -a env_args=(env -u LD_PRELOAD)
    [ "$preload" != "-" ] && env_args=(env "LD_PRELOAD=$preload")
    # shellcheck disable=SC2206 # settings are space-separated NAME=value words
    env_args+=($SETTINGS)
    if ! "${env_args[@]}" valgrind --tool=callgrind -q --collect-bus=yes --callgrind-out-file="$out" \
            "$PAIR" "$@" >"$log" 2>&1 || ! grep -q '^ok pair ' "$log"; then
        echo "callgrind_pair.sh: FAILED: $alloc: pair $*: $(grep -v '^ok' "$log" | head -3)" >&2
        echo NA; return
    fi
    # The events line names the columns of the summary line ("events: Ir Ge").
    total="$(awk -v want="$EVENT" '/^events:/ { for (i = 2; i <= NF; i++) if ($i == want) col = i }
        /^(summary|totals):/ && col { print $col; exit }' "$out")"
    echo "${total:-NA}"
}

# preload_ok <preload|->: malloc and free really resolve into the preload
# (ld.so silently falls back to glibc when a preload cannot be loaded).
preload_ok() {
    local preload="$1" want got
    if [ "$preload" = "-" ]; then
        got="$(env -u LD_PRELOAD "$BUILD_DIR/whichmalloc")" || return 1
        [ "$(printf '%s\n' "$got" | grep -c 'libc\.so')" -eq 2 ]
    else
        got="$(env LD_PRELOAD="$preload" "$BUILD_DIR/whichmalloc" 2>/dev/null)" || return 1
        want="$(readlink -f "$preload")"
        while read -r _ lib; do
            [ "$(readlink -f "$lib")" = "$want" ] || return 1
        done <<<"$got"
    fi
}

# per_iter <alloc> <preload> <tag> <size> [--baseline]: (Ir(2N) - Ir(N)) / N
per_iter() {
    local alloc="$1" preload="$2" tag="$3" size="$4"; shift 4
    local a b
    a="$(ir "$alloc" "$preload" "$tag.n1" "$size" "$N" "$@" ${HOLD[@]+"${HOLD[@]}"})"
    b="$(ir "$alloc" "$preload" "$tag.n2" "$size" "$((2 * N))" "$@" ${HOLD[@]+"${HOLD[@]}"})"
    if [ "$a" = NA ] || [ "$b" = NA ]; then echo NA; return; fi
    awk -v a="$a" -v b="$b" -v n="$N" 'BEGIN { v = (b - a) / n; printf "%.2f", v == 0 ? 0 : v }'
}

printf '%s per malloc+free pair (callgrind %s; (%s(2N)-%s(N))/N minus the baseline loop; N=%s%s)\n' \
    "$([ "$EVENT" = Ge ] && echo "atomic instructions" || echo instructions)" "$EVENT" "$EVENT" "$EVENT" \
    "$N" "${HOLD[@]+, --hold: one block of the size kept live}"
printf 'allocators: %s\n\n' "$(printf '%s\n' "${FOUND[@]}" | cut -f1 | paste -sd, - | sed 's/,/, /g')"
header="$(printf '%-15s %9s' allocator "baseline")"
for s in $SIZES; do header+="$(printf ' %8s' "$s")"; done
echo "$header"
printf '%s\n' "$(printf '%*s' "${#header}" '' | tr ' ' -)"

for line in "${FOUND[@]}"; do
    IFS=$'\t' read -r alloc preload SETTINGS <<<"$line"
    SETTINGS="${SETTINGS//\{tmp\}/$WORK}" # an allocator's files (a profile) go to the work dir
    if ! preload_ok "$preload"; then
        echo "callgrind_pair.sh: $alloc: LD_PRELOAD=$preload whichmalloc probe failed, or malloc/free do not resolve into it; skipped" >&2
        continue
    fi
    base="$(per_iter "$alloc" "$preload" base 16 --baseline)"
    row="$(printf '%-15s %9s' "$alloc" "$base")"
    for s in $SIZES; do
        it="$(per_iter "$alloc" "$preload" "s$s" "$s")"
        if [ "$it" = NA ] || [ "$base" = NA ]; then
            row+="$(printf ' %8s' FAILED)"
        else
            row+="$(awk -v x="$it" -v b="$base" 'BEGIN { v = x - b; printf " %8.1f", v == 0 ? 0 : v }')"
        fi
    done
    echo "$row"
done
printf '\n(columns: request size in bytes; "baseline" is the loop'"'"'s own instructions per iteration)\n'

#!/usr/bin/env bash
# The misuse battery: small programs with heap bugs made on purpose (tests/misuse/misuse.c,
# tests/misuse/misuse_cxx.cpp), each case run at 8 B, 4 KiB and 256 KiB under fitalloc
# (default, FITALLOC_SECURE=1, FITALLOC_MODE=lab), glibc and scudo (LLVM's hardened allocator:
# compiler-rt's standalone scudo, found as the bench finds it; left out if absent); prints a
# Markdown table of what happened: case | size | default | secure | lab | glibc | scudo, then
# how many runs each configuration stopped.
#
#   bash tools/misuse.sh [--lib PATH] [--out FILE] [--check FILE] [--tsv] [--bin DIR]
#                        [--jobs N] [--only REGEX] [--configs LIST] [--repeat N]
#
#   --lib PATH    the libfitalloc.so to preload (default: build/libfitalloc.so); the secure
#                 column preloads libfitalloc-secure.so from beside it
#   --out FILE    also write the table to FILE
#   --check FILE  compare the default, secure and lab columns run (not glibc, scudo) with FILE
#                 (tests/misuse/expected.tsv); list the mismatches and exit 1 if any
#   --tsv         print the results as expected.tsv rows instead of the table
#   --bin DIR     build the programs into DIR (default: a temporary directory)
#   --jobs N      runs at once (default 8; most take milliseconds, a hang its 10 s)
#   --only REGEX  only the cases whose name matches (grep -E)
#   --configs LIST  only these configurations, comma-separated (default
#                 default,secure,lab,glibc,scudo)
#   --repeat N    run each case N times in each configuration: an outcome that differs between
#                 runs (random placement) shows as mixed:<outcome>/<outcome>..., which matches
#                 only if each of them is one of the expected entry's alternatives (a|b)
# Environment: CC (default cc), CXX (default c++).
#
# Outcomes (one run: `timeout 10 prog <case> <size>`, stderr kept):
#   not caught            the program ran to its end (exit 0)
#   not caught:overlap    ... but the allocator handed out overlapping blocks (exit 6)
#   reused / not reused   reuse-after-free: malloc gave the freed block back at once, or not
#   caught:<kind>@<phase> killed by SIGABRT after a report on stderr; kind from its words:
#                         double-free, invalid-pointer, overflow (also a checked copy running "past the end"), underflow, guard-page (an
#                         access to a guard page between two pages of blocks: either way),
#                         write-after-free (also reads), zero-size (an access through malloc(0)),
#                         size-mismatch, type-mismatch (new, new[] or malloc released by
#                         another form), corruption (glibc also: double-free-or-corruption,
#                         invalid-size, unaligned; scudo also: chunk-state)
#   crash:SIG<x>@<phase>  killed by a signal without a report
#   hang                  still running after 10 s
#   cleared               stale-after-free: less than half of what the program wrote is left in
#                         the freed block; freed-all-zero: every byte of it reads as zero
#   n/a                   the case does not apply (free_sized missing from the C library)
#   exit:<n>              any other exit status
# <phase> is where it happened: setup, bug (the misuse itself), free (the free or realloc of
# an overflowed block), after (later mallocs and frees of the size), cleanup.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/help.sh"

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
src="$root/tests/misuse"

usage() {
    echo "usage: bash tools/misuse.sh [--lib PATH] [--out FILE] [--check FILE] [--tsv]" \
        "[--bin DIR] [--jobs N] [--only REGEX] [--configs LIST] [--repeat N]   (--help: more)" >&2
    exit 2
}

lib="$root/build/libfitalloc.so"
out=""
check=""
tsv=0
bin=""
jobs=8
only=""
configs_arg=default,secure,lab,glibc,scudo
repeat=1
while (($#)); do
    case "$1" in
    --lib) lib=${2:?--lib needs a path}; shift 2 ;;
    --out) out=${2:?--out needs a file}; shift 2 ;;
    --check) check=${2:?--check needs a file}; shift 2 ;;
    --tsv) tsv=1; shift ;;
    --bin) bin=${2:?--bin needs a directory}; shift 2 ;;
    --jobs) jobs=${2:?--jobs needs a number}; shift 2 ;;
    --only) only=${2:?--only needs a regex}; shift 2 ;;
    --configs) configs_arg=${2:?--configs needs a list}; shift 2 ;;
    --repeat) repeat=${2:?--repeat needs a number}; shift 2 ;;
    -h | --help) script_help "${BASH_SOURCE[0]}" ;;
    *) usage ;;
    esac
done

[[ -f "$lib" ]] || { echo "misuse: $lib not found (build first, or --lib PATH)" >&2; exit 2; }
lib=$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")
secure_lib=$(dirname "$lib")/$(basename "$lib" | sed 's/^libfitalloc/&-secure/')
[[ -z "$check" || -f "$check" ]] || { echo "misuse: $check not found" >&2; exit 2; }
[[ "$jobs" =~ ^[1-9][0-9]*$ && "$repeat" =~ ^[1-9][0-9]*$ ]] || usage
IFS=, read -r -a configs <<<"$configs_arg"
for config in "${configs[@]}"; do
    case $config in default | secure | lab | glibc | scudo) ;; *) usage ;; esac
done
if [[ " ${configs[*]} " == *" secure "* && ! -f $secure_lib ]]; then
    echo "misuse: $secure_lib not found (secure mode's library, built beside $lib)" >&2
    exit 2
fi
# scudo as the bench finds it (bench/harness/allocators.py): the newest match.
scudo=$(compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.scudo_standalone-$(uname -m).so" |
    sort -V | tail -n 1 || true)
if [[ -z $scudo && " ${configs[*]} " == *" scudo "* ]]; then
    echo "misuse: scudo not found (Debian: libclang-rt-14-dev): its column is left out" >&2
    kept=()
    for config in "${configs[@]}"; do [[ $config == scudo ]] || kept+=("$config"); done
    configs=("${kept[@]}")
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/fitalloc-misuse.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
if [[ -z "$bin" ]]; then
    bin="$scratch/bin"
fi
mkdir -p "$bin" "$scratch/err" "$scratch/res"

# --- build ---------------------------------------------------------------------------------
CC=${CC:-cc}
CXX=${CXX:-c++}
flags=(-O0 -g -U_FORTIFY_SOURCE -Wall -Wextra
    -fno-builtin-malloc -fno-builtin-free -fno-builtin-calloc -fno-builtin-realloc)
"$CC" "${flags[@]}" -I"$src" -o "$bin/misuse" "$src/misuse.c" -ldl
"$CXX" "${flags[@]}" -fsized-deallocation -I"$src" -o "$bin/misuse_cxx" "$src/misuse_cxx.cpp"

# --- the runs ------------------------------------------------------------------------------
# No inherited preload or fitalloc options in the runs; no core files.
clean_env=(-u LD_PRELOAD)
while IFS= read -r var; do
    clean_env+=(-u "$var")
done < <(compgen -e | grep '^FITALLOC_' || true)
ulimit -c 0

# The rows: "program case size" (size "-": the case does not depend on one).
rows=()
while IFS= read -r c; do
    case "$c" in
    invalid-stack | invalid-global | malloc0-*) sizes=(-) ;;
    *) sizes=(8 4096 262144) ;;
    esac
    for s in "${sizes[@]}"; do rows+=("misuse $c $s"); done
done < <("$bin/misuse" list)
while IFS= read -r c; do
    for s in 8 4096 262144; do rows+=("misuse_cxx $c $s"); done
done < <("$bin/misuse_cxx" list)
if [[ -n "$only" ]]; then
    kept=()
    for r in "${rows[@]}"; do
        read -r _ c _ <<<"$r"
        if grep -qE -- "$only" <<<"$c"; then kept+=("$r"); fi
    done
    rows=("${kept[@]}")
fi
((${#rows[@]})) || { echo "misuse: no case matches '$only'" >&2; exit 2; }

# The kind of a report line, from its words.
kind_of() {
    local l=${1,,}
    case "$l" in
    *"double free or corruption"*) echo double-free-or-corruption ;;
    *"double free"*) echo double-free ;;
    *"invalid pointer"*) echo invalid-pointer ;;
    *"(malloc(0)"*) echo zero-size ;;
    *"overflow or underflow"*) echo guard-page ;;
    *"invalid chunk state"*) echo chunk-state ;;
    *"type mismatch"* | *"alloc-dealloc mismatch"*) echo type-mismatch ;;
    *"invalid sized delete"*) echo size-mismatch ;;
    *misaligned*) echo unaligned ;;
    *overflow* | *"past the end"*) echo overflow ;;
    *underflow*) echo underflow ;;
    *"after free"*) echo write-after-free ;;
    *mismatch*) echo size-mismatch ;;
    *corrupt*) echo corruption ;;
    *"invalid size"* | *"invalid next size"* | *"invalid old size"*) echo invalid-size ;;
    *unaligned*) echo unaligned ;;
    *) echo other ;;
    esac
}

# classify CONFIG CASE STATUS STDERR-FILE: print the outcome.
classify() {
    local config=$1 c=$2 rc=$3 err=$4 phase report sig
    phase=$(sed -n 's/^misuse: phase //p' "$err" | tail -n 1)
    if [[ $config == glibc ]]; then
        report=$(grep -E -m 1 '^[a-z_]+\(\): |double free|corrupted' "$err" || true)
    elif [[ $config == scudo ]]; then
        report=$(grep -E -m 1 '^Scudo ERROR' "$err" || true)
    else
        report=$(grep -E -m 1 \
            'fitalloc: .*(overflow|underflow|after free|mismatch|corrupt|double free|invalid pointer|malloc\(0\)|past the end)' \
            "$err" || true)
    fi
    case "$rc" in
    0) if [[ $c == reuse-after-free ]]; then echo "not reused"; else echo "not caught"; fi ;;
    3) if [[ $c == reuse-after-free ]]; then echo "reused"; else echo "exit:3"; fi ;;
    4) echo "n/a" ;;
    6) echo "not caught:overlap" ;;
    7) echo "cleared" ;;
    124) echo "hang" ;;
    *)
        if ((rc > 128 && rc < 160)); then
            sig=SIG$(kill -l $((rc - 128)) 2>/dev/null || echo $((rc - 128)))
            if [[ -n $report && $sig == SIGABRT ]]; then
                echo "caught:$(kind_of "$report")@$phase"
            elif [[ -n $report ]]; then
                echo "crash:$sig@$phase+$(kind_of "$report")"
            else
                echo "crash:$sig@$phase"
            fi
        else
            echo "exit:$rc"
        fi
        ;;
    esac
}

# run_one INDEX CONFIG PROGRAM CASE SIZE: --repeat runs, their outcome into
# $scratch/res/INDEX.CONFIG (mixed:<a>/<b>... when they differ).
run_one() {
    local i=$1 config=$2 prog=$3 c=$4 size=$5 k got seen=()
    for ((k = 0; k < repeat; k++)); do
        got=$(run_once "$i" "$config" "$prog" "$c" "$size")
        [[ " ${seen[*]} " == *" $got "* ]] || seen+=("$got")
    done
    if ((${#seen[@]} == 1)); then
        echo "${seen[0]}" >"$scratch/res/$i.$config"
    else
        (IFS=/; echo "mixed:${seen[*]}") >"$scratch/res/$i.$config"
    fi
    return 0
}

# run_once INDEX CONFIG PROGRAM CASE SIZE: one run; prints its outcome.
run_once() {
    local i=$1 config=$2 prog=$3 c=$4 size=$5 rc
    local err="$scratch/err/$i.$config"
    local set_env=(LIBC_FATAL_STDERR_=1)
    case $config in
    default) set_env+=("LD_PRELOAD=$lib") ;;
    secure) set_env+=("LD_PRELOAD=$secure_lib" FITALLOC_SECURE=1) ;;
    lab) set_env+=("LD_PRELOAD=$lib" FITALLOC_MODE=lab) ;;
    scudo) set_env+=("LD_PRELOAD=$scudo") ;;
    esac
    [[ $size == - ]] && size=0
    # In a group with stderr closed off, so that bash's own "Segmentation fault" notes stay out.
    rc=$({
        timeout -k 2 10 env "${clean_env[@]}" "${set_env[@]}" "$bin/$prog" "$c" "$size" \
            >/dev/null 2>"$err" </dev/null
        echo $?
    } 2>/dev/null)
    classify "$config" "$c" "$rc" "$err"
}

running=0
for i in "${!rows[@]}"; do
    read -r prog c size <<<"${rows[$i]}"
    for config in "${configs[@]}"; do
        run_one "$i" "$config" "$prog" "$c" "$size" &
        running=$((running + 1))
        if ((running >= jobs)); then
            wait -n || true
            running=$((running - 1))
        fi
    done
done
wait

result() { cat "$scratch/res/$1.$2"; }

# --- report --------------------------------------------------------------------------------
table="$scratch/table.md"
{
    line="| case | size |" rule="|---|---|"
    for config in "${configs[@]}"; do line+=" $config |" rule+="---|"; done
    echo "$line"
    echo "$rule"
    for i in "${!rows[@]}"; do
        read -r _ c size <<<"${rows[$i]}"
        line="| $c | $size |"
        for config in "${configs[@]}"; do line+=" $(result "$i" "$config") |"; done
        echo "$line"
    done
    # The runs a configuration stopped (a report or a signal) or defused (freed contents
    # cleared, a freed block not handed out at once), of those that apply.
    line="| stopped or defused | |"
    for config in "${configs[@]}"; do
        good=0 total=0
        for i in "${!rows[@]}"; do
            got=$(result "$i" "$config")
            [[ $got == n/a ]] && continue
            total=$((total + 1))
            case $got in caught:* | crash:* | cleared | "not reused") good=$((good + 1)) ;; esac
        done
        line+=" $good of $total |"
    done
    echo "$line"
} >"$table"

if ((tsv)); then
    [[ $configs_arg == default,secure,lab* ]] ||
        { echo "misuse: --tsv needs the default, secure and lab configurations" >&2; exit 2; }
    for i in "${!rows[@]}"; do
        read -r _ c size <<<"${rows[$i]}"
        printf '%s\t%s\t%s\t%s\t%s\n' "$c" "$size" "$(result "$i" default)" \
            "$(result "$i" secure)" "$(result "$i" lab)"
    done
else
    cat "$table"
fi
[[ -z "$out" ]] || cp "$table" "$out"

[[ -n "$check" ]] || exit 0

# --- check ---------------------------------------------------------------------------------
# expected.tsv: "case<TAB>size<TAB>default<TAB>secure<TAB>lab"; '#' lines are comments. An
# entry may list alternatives separated by '|', or be '*' (anything).
declare -A want=()
while IFS=$'\t' read -r c size d s l rest; do
    [[ -z "$c" || "$c" == \#* ]] && continue
    if [[ -z "$l" || -n "${rest:-}" ]]; then
        echo "misuse: $check: bad line for '$c $size' (want 5 tab-separated fields)" >&2
        exit 2
    fi
    want["$c $size default"]=$d
    want["$c $size secure"]=$s
    want["$c $size lab"]=$l
    want["$c $size seen"]=0
done <"$check"

matches() { # matches GOT EXPECTED (mixed:A/B...: each of them must be one of EXPECTED's)
    local alt one found
    IFS='|' read -r -a alts <<<"$2"
    if [[ $1 == mixed:* ]]; then
        IFS='/' read -r -a outcomes <<<"${1#mixed:}"
    else
        outcomes=("$1")
    fi
    for one in "${outcomes[@]}"; do
        found=0
        for alt in "${alts[@]}"; do
            [[ "$alt" == "*" || "$alt" == "$one" ]] && found=1
        done
        ((found)) || return 1
    done
    return 0
}

bad=()
for i in "${!rows[@]}"; do
    read -r _ c size <<<"${rows[$i]}"
    if [[ -z "${want["$c $size seen"]+x}" ]]; then
        bad+=("$c $size: no entry in $check")
        continue
    fi
    want["$c $size seen"]=1
    for config in "${configs[@]}"; do
        [[ $config == glibc || $config == scudo ]] && continue
        got=$(result "$i" "$config")
        exp=${want["$c $size $config"]}
        matches "$got" "$exp" || bad+=("$c $size $config: expected '$exp', got '$got'")
    done
done
if [[ -z "$only" ]]; then
    for key in "${!want[@]}"; do
        if [[ $key == *" seen" && ${want[$key]} == 0 ]]; then
            bad+=("${key% seen}: in $check but not run")
        fi
    done
fi

if ((${#bad[@]})); then
    echo "misuse: ${#bad[@]} outcomes differ from $check:" >&2
    printf '  %s\n' "${bad[@]}" >&2
    echo "misuse: (bash tools/misuse.sh --tsv prints the current outcomes as $check rows)" >&2
    exit 1
fi
checked=()
for config in "${configs[@]}"; do [[ $config == glibc || $config == scudo ]] || checked+=("$config"); done
echo "misuse: the ${checked[*]} outcomes match $check (${#rows[@]} rows, $repeat run(s) each)"

#!/usr/bin/env bash
# The layer check of src/ (src/README.md):  bash tools/check-layers.sh [SRC_DIR]
#
# Every file under src/<layer>/ may include, by quoted path under src/ ("engine/engine.h"), only
# headers of its own layer and of the layers below it, in this order:
#
#   platform < common < trace < engine, lab < process < override
#
# (engine and lab are side by side: neither includes the other; they meet in common/mode.h).
# Inside the lab the same rule holds between its folders:
#
#   lab/index < lab/policy < lab/heap < lab/threads < lab (its own files)
#
# Public headers ("fitalloc*.h", include/) are open to every layer. System headers: only the
# platform layer includes the C library's system interfaces; the others keep to the pure C
# headers below (and valgrind's for the debugging-tools build).
#
# Two seams are checked the same way: the engine reaches the mode in force only through its
# table (common/mode.h: `_fa_mode->...`, never a test of `_fa_mode` itself; no core file, one
# of engine/ outside engine/secure/, tests secure mode's or tracing's flag: a mode's pages are
# marked and handled through engine/mode_pages.h), and a call is
# recorded only where it enters, through FA_TRACED (trace/record.h): outside trace/ only
# override/ calls the recorder's enter, record and leave (operator new's traced calls, which a
# new-handler may interrupt). Prints each violation as file:line: message and exits 1 if there
# is one.
set -euo pipefail

src=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../src" && pwd)}
[[ -d "$src" ]] || { echo "check-layers: no directory $src" >&2; exit 2; }

# rank <path under src/>: the layer rank of a file or an included header; empty if none.
rank() {
    case "$1" in
    platform/*) echo 10 ;;
    common/*) echo 20 ;;
    trace/*) echo 30 ;;
    engine/*) echo 40 ;;
    lab/index/*) echo 41 ;;
    lab/policy/*) echo 42 ;;
    lab/heap/*) echo 43 ;;
    lab/threads/*) echo 44 ;;
    lab/*) echo 45 ;;
    process/*) echo 50 ;;
    override/*) echo 60 ;;
    *) echo "" ;;
    esac
}
# layer <path>: the folder that is the file's layer (engine, lab/heap, lab, ...).
layer() {
    case "$1" in
    lab/*/*) echo "${1%/*}" ;;
    *) echo "${1%%/*}" ;;
    esac
}

pure_headers=" errno.h stdarg.h stdbool.h stddef.h stdint.h string.h "
violations=0
report() {
    echo "$1: $2"
    violations=$((violations + 1))
}

while IFS= read -r file; do
    rel=${file#"$src"/}
    own_rank=$(rank "$rel")
    if [[ -z "$own_rank" ]]; then
        report "src/$rel" "not in a layer's folder (src/README.md)"
        continue
    fi
    own_layer=$(layer "$rel")
    while IFS=: read -r line text; do
        if [[ "$text" =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\"([^\"]+)\" ]]; then
            header=${BASH_REMATCH[1]}
            [[ "$header" == fitalloc*.h ]] && continue
            header_rank=$(rank "$header")
            if [[ -z "$header_rank" ]]; then
                report "src/$rel:$line" "\"$header\" is not named by its path under src/"
            elif [[ "$(layer "$header")" != "$own_layer" ]] &&
                { ((header_rank >= own_rank)) || [[ $header_rank == 40 && $own_rank == 4? ]] ||
                    [[ $own_rank == 40 && $header_rank == 4? ]]; }; then
                report "src/$rel:$line" "$own_layer includes \"$header\", which is not below it"
            fi
        elif [[ "$text" =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\<([^\>]+)\> ]]; then
            header=${BASH_REMATCH[1]}
            [[ "$own_layer" == platform || "$pure_headers" == *" $header "* ]] && continue
            [[ "$rel" == override/tools.c && "$header" == valgrind/* ]] && continue
            report "src/$rel:$line" "<$header> is a system interface: only src/platform/ includes it"
        fi
    done < <(grep -n '^[[:space:]]*#[[:space:]]*include' "$file" || true)
done < <(find "$src" -type f \( -name '*.c' -o -name '*.h' \) | sort)

while IFS=: read -r file line _; do
    report "src/${file#"$src"/}:$line" "tests the mode: the engine calls its table (common/mode.h)"
done < <(grep -rnE '_fa_mode($|[^-_[:alnum:]]|-[^>])' "$src/engine" --include='*.[ch]' || true)
while IFS=: read -r file line _; do
    report "src/${file#"$src"/}:$line" "tests a mode's flag in the core: use engine/mode_pages.h"
done < <(grep -rnE '(^|[^_[:alnum:]])(_fa_secure|_fa_tracing|_fa_trace_on|fa_secure_marked)($|[^_[:alnum:]])' \
    "$src/engine" --include='*.[ch]' | grep -v "^$src/engine/secure/" || true)
while IFS=: read -r file line _; do
    report "src/${file#"$src"/}:$line" "records a call outside its entry: use FA_TRACED (trace/record.h)"
done < <(grep -rnE '_fa_trace_(enter|record|leave|free_begin)\(' "$src" --include='*.[ch]' |
    grep -vE "^$src/(trace|override)/" || true)

if ((violations)); then
    echo "check-layers: $violations line(s) break the layering of src/ (src/README.md)" >&2
    exit 1
fi
echo "check-layers: src/ includes only downward"

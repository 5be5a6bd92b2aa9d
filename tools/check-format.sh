#!/usr/bin/env bash
# Check that the C/C++ sources follow .clang-format.
#   bash tools/check-format.sh         report files that differ, exit 1 if any
#   bash tools/check-format.sh --fix   reformat them in place
# Files: include/*.h, src/**/*.{c,h,cpp}, tests/**/*.{c,h,cpp}, bench/**/*.c, tools/**/*.{c,h}
# (in a git checkout: the tracked and the untracked-but-not-ignored ones).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

fix=0
case "${1:-}" in
"") ;;
--fix) fix=1 ;;
*)
    echo "usage: $0 [--fix]" >&2
    exit 2
    ;;
esac

CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
command -v "$CLANG_FORMAT" >/dev/null ||
    { echo "check-format: $CLANG_FORMAT not found (apt-get install clang-format)" >&2; exit 1; }

files=()
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    # git pathspecs: '*' also matches '/', so src/*.c covers src/**/*.c.
    while IFS= read -r -d '' f; do
        [[ -f "$f" ]] && files+=("$f")
    done < <(git ls-files -z --cached --others --exclude-standard -- \
        'include/*.h' \
        'src/*.c' 'src/*.h' 'src/*.cpp' \
        'tests/*.c' 'tests/*.h' 'tests/*.cpp' \
        'bench/*.c' 'tools/*.c' 'tools/*.h' | sort -zu)
else
    while IFS= read -r -d '' f; do
        files+=("${f#./}")
    done < <(
        {
            [[ -d include ]] && find include -maxdepth 1 -type f -name '*.h' -print0
            for d in src tests; do
                [[ -d $d ]] && find "$d" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cpp' \) -print0
            done
            [[ -d bench ]] && find bench -type f -name '*.c' -print0
            [[ -d tools ]] && find tools -type f \( -name '*.c' -o -name '*.h' \) -print0
        } | sort -zu
    )
fi

if ((${#files[@]} == 0)); then
    echo "check-format: no files to check"
    exit 0
fi

if ((fix)); then
    "$CLANG_FORMAT" -i --style=file "${files[@]}"
    echo "check-format: formatted ${#files[@]} files"
    exit 0
fi

bad=()
for f in "${files[@]}"; do
    if ! "$CLANG_FORMAT" --dry-run --Werror --style=file "$f" >/dev/null 2>&1; then
        bad+=("$f")
    fi
done

if ((${#bad[@]})); then
    echo "check-format: ${#bad[@]} of ${#files[@]} files differ from .clang-format:" >&2
    for f in "${bad[@]}"; do
        echo "== $f" >&2
        "$CLANG_FORMAT" --style=file "$f" | diff -u "$f" - | head -n 40 >&2 || true
    done
    echo "check-format: run 'bash tools/check-format.sh --fix' to reformat" >&2
    exit 1
fi
echo "check-format: ${#files[@]} files ok"

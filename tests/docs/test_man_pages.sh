#!/usr/bin/env bash
# The manual pages speak of the installed system, not of the source tree they are made from
# (cmake/manpages.cmake, cmake/man/man.lua):
#   - the filter leaves out each form of citation of the sources that docs/ uses, with its
#     parentheses or its clause, and a section headed "In the source tree", on a sample page;
#   - the pages of this build (fitalloc(1), fitalloc(3), fitalloc-replay(1)) name no file of the
#     source tree (docs/, tests/, tools/, src/, bench/, python/, cmake/, build/, *.md), have no
#     tests section, and tell nobody to apt-get what the packages depend on.
set -euo pipefail
work="$FITALLOC_BUILD_DIR/tests/docs/man-pages"
rm -rf "$work"
mkdir -p "$work"
fail() {
    echo "FAIL: $*"
    exit 1
}
command -v pandoc >/dev/null || { echo "pandoc is not installed (apt-get install pandoc): skipped"; exit 77; }
pages="$FITALLOC_BUILD_DIR/man"
for page in fitalloc.1 fitalloc.3 fitalloc-replay.1; do
    [[ -f "$pages/$page.gz" ]] || {
        echo "no manual pages in this build (FITALLOC_MANPAGES, pandoc and help2man): skipped"
        exit 77
    }
done

cat >"$work/sample.md" <<'EOF'
# Sample

Options come from one table (`src/common/options.h`) and without allocating.
A page kept at hand may stay empty ([design.md](design.md), "Pages and free lists").
Its range stays reserved (kept: [design.md](design.md), "Memory back to the OS").
Meshing (docs/design.md, "Meshing"): pages share frames (`bench/support/fragment.c`).
Slower: see security.md for the cost.
Traced in both modes: [trace.md](trace.md) has the format. A forked child writes `path.PID`.
Lab only; [lab.md](lab.md) explains the lab.
Costs two calls (security.md gives the cost).

## In the source tree

The code is in `python/fitalloc_cli/`.

### Tests

`tests/command/` checks it.

## After

Nothing else goes (an aside: kept; this too).
EOF
cat >"$work/want.txt" <<'EOF'
Options come from one table and without allocating. A page kept at hand may stay empty. Its range stays reserved (kept). Meshing: pages share frames. Slower. Traced in both modes. A forked child writes path.PID. Lab only. Costs two calls.
After
Nothing else goes (an aside: kept; this too).
EOF
pandoc --from markdown --to plain --wrap=none --lua-filter="$FITALLOC_SOURCE_DIR/cmake/man/man.lua" \
    "$work/sample.md" | awk 'NF' | grep -v '^Sample$' >"$work/got.txt" || fail "pandoc with man.lua failed"
diff -u "$work/want.txt" "$work/got.txt" || fail "the filter's output differs (above)"

source_tree='(^|[^[:alnum:]_/.-])(docs|tests|tools|src|bench|python|cmake|build)/|[[:alnum:]_-]\.md\b|source tree|apt-get'
for page in fitalloc.1 fitalloc.3 fitalloc-replay.1; do
    zcat "$pages/$page.gz" >"$work/$page"
    # The text a reader sees, without roff's hyphenation at line ends.
    pandoc --from man --to plain --wrap=none "$work/$page" >"$work/$page.txt" ||
        fail "pandoc cannot read $page back"
    if grep -Eni "$source_tree" "$work/$page.txt"; then
        fail "$page speaks of the source tree (lines above)"
    fi
    if grep -Eq '^\.S[HS] "?(TESTS|Tests)"?$' "$work/$page"; then
        fail "$page has a tests section"
    fi
    grep -q '^\.SH "\{0,1\}SEE ALSO' "$work/$page" || [[ "$page" == fitalloc-replay.1 ]] ||
        fail "$page has no SEE ALSO section"
done
echo "manual pages: no source tree in fitalloc(1), fitalloc(3), fitalloc-replay(1)"

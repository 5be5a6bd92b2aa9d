#!/usr/bin/env bash
# Builds for debugging tools see inside fitalloc: a small program with four bugs (a leak, a
# write after free, a one-byte overflow, a read of uninitialised memory) must have each
# reported at its line
#   - by valgrind memcheck, with fitalloc built with -DFITALLOC_VALGRIND=ON and linked in
#     (valgrind run with --soname-synonyms=somalloc=nouserintercepts, so that fitalloc, not
#     valgrind's own allocator, serves the program), and a clean program with no error at all;
#   - by AddressSanitizer, with fitalloc built with -DFITALLOC_ASAN=ON and linked into a program
#     built with -fsanitize=address that allocates through the fa_* API (write after free and
#     overflow: "use-after-poison" at the line).
set -euo pipefail
work="$FITALLOC_BUILD_DIR/tests/override/debugging-tools"
mkdir -p "$work"
fail() {
    echo "FAIL: $*"
    exit 1
}

build() { # build <dir> <cmake options...>: just the libraries
    local dir=$1
    shift
    cmake -S "$FITALLOC_SOURCE_DIR" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DFITALLOC_TESTS=OFF "$@" >"$dir.log" 2>&1 || { cat "$dir.log"; fail "configure $dir"; }
    cmake --build "$dir" --target fitalloc fitalloc_static >>"$dir.log" 2>&1 ||
        { tail -30 "$dir.log"; fail "build $dir"; }
}

# Line numbers matter: the checks below name them.
cat >"$work/bugs.c" <<'CEOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void)
{
    char *leak = malloc(100);
    leak[0] = 1;
    char *p = malloc(40);
    memset(p, 0, 40);
    free(p);
    p[3] = 7;
    char *q = malloc(40);
    q[40] = 1;
    int *u = malloc(sizeof(int) * 4);
    if (u[2] > 3)
        puts("x");
    free(q);
    free(u);
    return 0;
}
CEOF
cat >"$work/clean.c" <<'CEOF'
#include <stdlib.h>
#include <string.h>
int main(void)
{
    void *keep[100];
    for (int i = 0; i < 100; i++) {
        keep[i] = malloc((size_t)i * 37 + 1);
        memset(keep[i], i, (size_t)i * 37 + 1);
    }
    for (int i = 0; i < 100; i++) {
        keep[i] = realloc(keep[i], (size_t)i * 91 + 8);
        free(keep[i]);
    }
    void *big = calloc(1, 1 << 20);
    free(big);
    return 0;
}
CEOF

if command -v valgrind >/dev/null; then
    build "$work/vg" -DFITALLOC_VALGRIND=ON
    for prog in bugs clean; do
        "$CC" -g -O0 -fno-builtin -o "$work/$prog" "$work/$prog.c" -L"$work/vg" -lfitalloc \
            -Wl,-rpath,"$work/vg" || fail "compile $prog"
    done
    # (The purger thread's TLS, allocated by the loader, shows as "possibly lost": not an error.)
    vg=(valgrind --leak-check=full --errors-for-leak-kinds=definite
        --soname-synonyms=somalloc=nouserintercepts)
    "${vg[@]}" "$work/bugs" >"$work/bugs.vg" 2>&1 || true
    grep -q "fa_malloc (tools.c" "$work/bugs.vg" || fail "valgrind did not see fitalloc's blocks"
    grep -A1 "Invalid write of size 1" "$work/bugs.vg" | grep -q "bugs.c:11" ||
        fail "write after free at line 11 not reported"
    grep -A1 "Invalid write of size 1" "$work/bugs.vg" | grep -q "bugs.c:13" ||
        fail "overflow at line 13 not reported"
    grep -A1 "uninitialised" "$work/bugs.vg" | grep -q "bugs.c:15" ||
        fail "uninitialised read at line 15 not reported"
    grep -A6 "100 bytes in 1 blocks are definitely lost" "$work/bugs.vg" | grep -q "bugs.c:6" ||
        fail "leak at line 6 not reported"
    "${vg[@]}" --error-exitcode=3 "$work/clean" >"$work/clean.vg" 2>&1 ||
        { cat "$work/clean.vg"; fail "errors in a clean program"; }
    grep -q "are definitely lost" "$work/clean.vg" && fail "a leak in a clean program"
    echo "valgrind: all four bugs at their lines, none in the clean program"
else
    fail "valgrind not installed (apt-get install valgrind)"
fi

build "$work/asan" -DFITALLOC_ASAN=ON -DFITALLOC_OVERRIDE=OFF # ASan owns malloc
cat >"$work/asan_bugs.c" <<'CEOF'
#include <stdlib.h>
#include <string.h>
#include "fitalloc.h"
int main(int argc, char **argv)
{
    char *p = fa_malloc(40);
    memset(p, 0, 40);
    fa_free(p);
    if (argc > 1 && argv[1][0] == 'u')
        p[3] = 7;
    char *q = fa_malloc(40);
    if (argc > 1 && argv[1][0] == 'o')
        q[40] = 1;
    fa_free(q);
    return 0;
}
CEOF
"$CC" -g -O0 -fsanitize=address -I"$FITALLOC_INCLUDE" -o "$work/asan_bugs" "$work/asan_bugs.c" \
    "$work/asan/libfitalloc.a" -lpthread || fail "compile asan_bugs"
ASAN_OPTIONS=detect_leaks=0 "$work/asan_bugs" || fail "the ASan program failed without a bug"
for bug in u:10 o:13; do
    out=$(ASAN_OPTIONS=detect_leaks=0 "$work/asan_bugs" "${bug%%:*}" 2>&1) &&
        fail "bug ${bug%%:*} not reported by ASan"
    grep -q "use-after-poison" <<<"$out" || fail "bug ${bug%%:*}: no use-after-poison: $out"
    grep -q "asan_bugs.c:${bug##*:}" <<<"$out" || fail "bug ${bug%%:*} not at line ${bug##*:}"
done
echo "ASan: write after free and overflow at their lines"
echo "override/debugging_tools: ok"

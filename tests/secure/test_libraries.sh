#!/usr/bin/env bash
# Secure mode lives in libfitalloc-secure.so alone: under libfitalloc.so, FITALLOC_SECURE=1 is
# never ignored in silence (one line on stderr names the secure library; the program runs on in
# the default mode), and without it nothing is printed; under libfitalloc-secure.so a heap
# overflow is stopped with its message, unless FITALLOC_SECURE=0.
set -euo pipefail
: "${FITALLOC_LIB:?FITALLOC_LIB is not set}" "${FITALLOC_SECURE_LIB:?FITALLOC_SECURE_LIB is not set}"
if ! nm -D --defined-only "$FITALLOC_LIB" | grep -qE ' T malloc$'; then
    echo "no interposition layer in $FITALLOC_LIB: skipped"
    exit 77
fi
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
work=$(mktemp -d "${TMPDIR:-/tmp}/fitalloc-secure-libs.XXXXXX")
trap 'rm -rf "$work"' EXIT
cat >"$work/overflow.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
    char *volatile p = malloc(24);
    if (!p)
        return 2;
    for (int i = 0; i < 24 + 8; i++) /* 8 bytes past the block, not by memset (checked) */
        p[i] = 'x';
    free(p);
    puts("survived");
    return 0;
}
C
"${CC:-cc}" -O1 -fno-builtin -o "$work/overflow" "$work/overflow.c" || fail "cannot build the program"

# Under libfitalloc.so, FITALLOC_SECURE=1: the warning, once, and the program runs.
FITALLOC_SECURE=1 LD_PRELOAD="$FITALLOC_LIB" sh -c 'echo ran' >"$work/out" 2>"$work/err" ||
    fail "sh under libfitalloc.so with FITALLOC_SECURE=1 failed: $(cat "$work/err")"
grep -qx ran "$work/out" || fail "the program did not run: $(cat "$work/out")"
lines=$(grep -c 'FITALLOC_SECURE=1 needs libfitalloc-secure.so' "$work/err" || true)
[[ $lines == 1 ]] || fail "expected the warning once on stderr, got $lines: $(cat "$work/err")"
# Without it: nothing on stderr.
LD_PRELOAD="$FITALLOC_LIB" sh -c 'echo ran' >"$work/out" 2>"$work/err" || fail "sh failed"
[[ ! -s "$work/err" ]] || fail "stderr without FITALLOC_SECURE: $(cat "$work/err")"
# Under libfitalloc-secure.so, with FITALLOC_SECURE=1 or without it (preloading the secure
# library asks for secure mode): the overflow is stopped, with its message.
for setting in FITALLOC_SECURE=1 FITALLOC_UNSET=; do
    status=0
    env "$setting" LD_PRELOAD="$FITALLOC_SECURE_LIB" "$work/overflow" >"$work/out" 2>"$work/err" ||
        status=$?
    [[ $status == 134 ]] && grep -q 'fitalloc: free(): heap overflow of the 24-byte block' "$work/err" ||
        fail "the overflow under libfitalloc-secure.so ($setting): status $status, stderr: $(cat "$work/err")"
    ! grep -q survived "$work/out" || fail "the program went on after the overflow ($setting)"
done
# FITALLOC_SECURE=0 turns it off there: the default mode, which this overflow gets past.
FITALLOC_SECURE=0 LD_PRELOAD="$FITALLOC_SECURE_LIB" "$work/overflow" >"$work/out" 2>"$work/err" ||
    fail "FITALLOC_SECURE=0 under libfitalloc-secure.so: stopped: $(cat "$work/err")"
grep -qx survived "$work/out" || fail "FITALLOC_SECURE=0: the program did not finish"
echo "secure/libraries: ok"

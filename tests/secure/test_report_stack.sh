#!/usr/bin/env bash
# Secure mode's reports say where: a double free of malloc(40) is reported with the size the
# program asked for (40 bytes, not its block's class) and the stack of the call, whose first
# frame names the function that called free in a program built with -rdynamic
# (engine/secure/report_stack.c), followed by where the block was freed the first time and
# where it was allocated, as AddressSanitizer's reports say; a runaway write into a guard page is reported with the
# function that made it, through the SIGSEGV handler.
set -euo pipefail
: "${FITALLOC_SECURE_LIB:?FITALLOC_SECURE_LIB is not set}"
if ! nm -D --defined-only "$FITALLOC_SECURE_LIB" | grep -qE ' T malloc$'; then
    echo "no interposition layer in $FITALLOC_SECURE_LIB: skipped"
    exit 77
fi
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
work=$(mktemp -d "${TMPDIR:-/tmp}/fitalloc-report-stack.XXXXXX")
trap 'rm -rf "$work"' EXIT
cat >"$work/bugs.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
__attribute__((noinline)) char *make(void)
{
    return malloc(40);
}
__attribute__((noinline)) void release(char *p)
{
    free(p);
}
__attribute__((noinline)) void release_twice(char *p)
{
    release(p);
    free(p);
}
__attribute__((noinline)) void run_away(char *p)
{
    for (size_t i = 0; i < (1u << 20); i++)
        ((volatile char *)p)[i] = 1;
}
int main(int argc, char **argv)
{
    char *p = make();
    if (argc > 1 && !strcmp(argv[1], "guard"))
        run_away(p);
    else
        release_twice(p);
    puts("not caught");
    return 0;
}
C
"${CC:-cc}" -O1 -fno-optimize-sibling-calls -rdynamic -o "$work/bugs" "$work/bugs.c" || fail "cannot build the program"

for bug in double-free guard; do
    rc=0
    LD_PRELOAD="$FITALLOC_SECURE_LIB" "$work/bugs" "$bug" >"$work/out" 2>"$work/err" || rc=$?
    ((rc == 134)) || fail "$bug: expected SIGABRT (134), got $rc: $(cat "$work/err")"
    case $bug in
    double-free)
        grep -qE '^fitalloc: free\(\): double free of 0x[0-9a-f]+ \(40-byte block\)$' "$work/err" ||
            fail "$bug: no report naming the 40 bytes asked for: $(cat "$work/err")"
        grep -qE '^    #0 0x[0-9a-f]+ in release_twice\+0x[0-9a-f]+ \(.*bugs\+0x[0-9a-f]+\)$' \
            "$work/err" || fail "$bug: frame #0 is not release_twice: $(cat "$work/err")"
        grep -qE '^  freed by 0x[0-9a-f]+ in release\+0x[0-9a-f]+ \(.*bugs\+0x[0-9a-f]+\)$' \
            "$work/err" || fail "$bug: no line says it was freed in release: $(cat "$work/err")"
        grep -qE '^  allocated by 0x[0-9a-f]+ in make\+0x[0-9a-f]+ \(.*bugs\+0x[0-9a-f]+\)$' \
            "$work/err" || fail "$bug: no line says it was allocated in make: $(cat "$work/err")"
        ;;
    guard)
        grep -q '^fitalloc: heap overflow or underflow into the guard page' "$work/err" ||
            fail "$bug: no guard-page report: $(cat "$work/err")"
        grep -qE '^    #[0-9]+ 0x[0-9a-f]+ in run_away\+' "$work/err" ||
            fail "$bug: no frame names run_away: $(cat "$work/err")"
        ;;
    esac
    grep -qE '^    #[0-9]+ 0x[0-9a-f]+ in main\+' "$work/err" ||
        fail "$bug: no frame names main: $(cat "$work/err")"
done
echo "ok: reports name the size asked for, the stack, where the block was freed and allocated"

# FITALLOC_* environment options: a bogus FITALLOC_PURGE_DELAY gives a warning
# naming the variable but the program runs normally (with the default value);
# a valid value is what fa_option_get("purge_delay") returns; FITALLOC_VERBOSE=1
# prints lines starting with "fitalloc:"; by default fitalloc prints nothing.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
need_env CC FITALLOC_INCLUDE
make_workdir

cat >"$WORK/opt.c" <<'CEOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fitalloc.h"

int main(void)
{
    unsigned long sum = 0;
    for (int i = 0; i < 10000; i++) {
        char *p = malloc((size_t)(i % 2000) + 1);
        if (!p) return 1;
        memset(p, 1, (size_t)(i % 2000) + 1);
        sum += (unsigned char)p[i % 2000];
        free(p);
    }
    void *big = malloc(8 << 20);
    if (!big) return 1;
    free(big);
    printf("purge_delay=%lld unknown=%lld sum=%lu\n", fa_option_get("purge_delay"),
           fa_option_get("no_such_option"), sum);
    return 0;
}
CEOF
libdir=$(dirname "$FITALLOC_LIB")
"$CC" -O1 -fno-builtin-malloc -fno-builtin-free -I"$FITALLOC_INCLUDE" -o "$WORK/opt" "$WORK/opt.c" \
    -L"$libdir" -lfitalloc -Wl,-rpath,"$libdir" 2>"$WORK/cc.err" ||
    { cat "$WORK/cc.err" >&2; fail "building the option program"; }

# run NAME ENV... : runs ./opt with the given environment, stdout/stderr in $WORK/NAME.{out,err}
run() {
    local name=$1
    shift
    env -u FITALLOC_PURGE_DELAY -u FITALLOC_VERBOSE -u FITALLOC_STATS "$@" "$WORK/opt" \
        >"$WORK/$name.out" 2>"$WORK/$name.err" ||
        { cat "$WORK/$name.err" >&2; fail "$name: program failed"; }
    grep -q 'sum=10000$' "$WORK/$name.out" || fail "$name: wrong output: $(cat "$WORK/$name.out")"
    grep -q 'unknown=-1 ' "$WORK/$name.out" || fail "$name: fa_option_get(unknown) != -1"
}
delay_of() { sed -nE 's/^purge_delay=(-?[0-9]+) .*/\1/p' "$WORK/$1.out"; }

run default
default=$(delay_of default)
[ -n "$default" ] && [ "$default" -ge 0 ] || fail "default purge_delay is '$default'"
[ ! -s "$WORK/default.err" ] || fail "fitalloc printed without being asked: $(head -5 "$WORK/default.err")"

run bogus FITALLOC_PURGE_DELAY=bogus
grep -q 'FITALLOC_PURGE_DELAY' "$WORK/bogus.err" ||
    fail "no warning naming FITALLOC_PURGE_DELAY for a bogus value; stderr: '$(cat "$WORK/bogus.err")'"
[ "$(delay_of bogus)" = "$default" ] ||
    fail "bogus FITALLOC_PURGE_DELAY: purge_delay is $(delay_of bogus), expected the default $default"

run valid FITALLOC_PURGE_DELAY=123
[ "$(delay_of valid)" = 123 ] || fail "FITALLOC_PURGE_DELAY=123 gives purge_delay $(delay_of valid)"
! grep -q 'FITALLOC_PURGE_DELAY' "$WORK/valid.err" || fail "warning for a valid value: $(cat "$WORK/valid.err")"

run zero FITALLOC_PURGE_DELAY=0
[ "$(delay_of zero)" = 0 ] || fail "FITALLOC_PURGE_DELAY=0 gives purge_delay $(delay_of zero)"

run verbose FITALLOC_VERBOSE=1
grep -q '^fitalloc:' "$WORK/verbose.err" ||
    fail "FITALLOC_VERBOSE=1 printed no line starting with 'fitalloc:'; stderr: '$(cat "$WORK/verbose.err")'"

# the same through LD_PRELOAD in a program that knows nothing of fitalloc
env -u FITALLOC_VERBOSE FITALLOC_PURGE_DELAY=bogus LD_PRELOAD="$FITALLOC_LIB" ls -la / \
    >"$WORK/ls.out" 2>"$WORK/ls.err" || { cat "$WORK/ls.err" >&2; fail "ls under fitalloc with a bogus option failed"; }
grep -q 'FITALLOC_PURGE_DELAY' "$WORK/ls.err" || fail "preloaded: no warning naming FITALLOC_PURGE_DELAY"
ls -la / >"$WORK/ls.ref" 2>/dev/null
[ "$(wc -l <"$WORK/ls.out")" -eq "$(wc -l <"$WORK/ls.ref")" ] || fail "ls output differs under fitalloc"
env -u FITALLOC_PURGE_DELAY FITALLOC_VERBOSE=1 LD_PRELOAD="$FITALLOC_LIB" ls / \
    >/dev/null 2>"$WORK/lsv.err" || fail "ls under fitalloc with FITALLOC_VERBOSE=1 failed"
grep -q '^fitalloc:' "$WORK/lsv.err" || fail "preloaded FITALLOC_VERBOSE=1: no 'fitalloc:' line"
echo "override/env_options: ok (default purge_delay $default)"

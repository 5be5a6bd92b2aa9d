# FITALLOC_* environment options: a bogus FITALLOC_PURGE_DELAY gives a warning
# naming the variable but the program runs normally (with the default value);
# a valid value is what fa_option_get("purge_delay") returns; FITALLOC_VERBOSE=1
# prints lines starting with "fitalloc:"; by default fitalloc prints nothing.
# Values beyond an option's range are refused the same way, also those that overflow on
# their way (seconds in milliseconds, a K/M/G suffix) or once the engine uses them (ten purge
# delays added to the clock, a count in 32 bits); the largest value in range is taken.
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
    printf("arenas=%lld large_cache=%lld\n", fa_option_get("arenas"), fa_option_get("large_cache"));
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

# refused <what> <variable> <text> <default>: the value is refused with a warning naming it
refused() {
    local name=$1 var=$2 text=$3 want=$4 key
    key=$(tr 'A-Z' 'a-z' <<<"${var#FITALLOC_}")
    run "$name" "$var=$text"
    grep -q "^fitalloc: warning: $var=$text is not " "$WORK/$name.err" ||
        fail "$var=$text: no warning refusing it; stderr: '$(cat "$WORK/$name.err")'"
    grep -q "$key=$want\b" "$WORK/$name.out" ||
        fail "$var=$text: $(grep -o "$key=[0-9-]*" "$WORK/$name.out"), expected the default $want"
}
refused seconds-overflow FITALLOC_PURGE_DELAY 18446744073709552s "$default" # was 384 ms
refused ten-delays-wrap FITALLOC_PURGE_DELAY 1844674407370955162 "$default" # 10x: 4 ms
refused delay-above-max FITALLOC_PURGE_DELAY 4503599627370497 "$default"    # 2^52 + 1
refused seconds-above-max FITALLOC_PURGE_DELAY 4503599627371s "$default"
refused digits-overflow FITALLOC_PURGE_DELAY 99999999999999999999999 "$default"
refused count-in-32-bits FITALLOC_ARENAS 4294967297 0 # the lab's unsigned count: 1
refused size-overflow FITALLOC_LARGE_CACHE 17179869184G 67108864 # 2^64 bytes
run delay-max FITALLOC_PURGE_DELAY=4503599627370496
[ "$(delay_of delay-max)" = 4503599627370496 ] && [ ! -s "$WORK/delay-max.err" ] ||
    fail "FITALLOC_PURGE_DELAY=2^52 ms: purge_delay $(delay_of delay-max), $(cat "$WORK/delay-max.err")"
run seconds-max FITALLOC_PURGE_DELAY=4503599627370s
[ "$(delay_of seconds-max)" = 4503599627370000 ] ||
    fail "FITALLOC_PURGE_DELAY=4503599627370s: purge_delay $(delay_of seconds-max)"

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

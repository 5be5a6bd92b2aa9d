# FITALLOC_LAB_CHECK=1 runs the lab's heap checker at exit: a program that overwrites the check
# word of one of its blocks (the 8 bytes before it) and exits without freeing it runs to the end
# without the option, and with it is stopped at exit (SIGABRT) by the checker's report; a sound
# program gets the line naming how many heaps were checked, under each thread strategy.
source "$(dirname "${BASH_SOURCE[0]}")/../override/common.sh"
need_env CC
make_workdir

symbols=$(nm -D --defined-only "$FITALLOC_LIB") || fail "nm $FITALLOC_LIB"
grep -Eq ' T malloc$' <<<"$symbols" || { echo "no malloc in $FITALLOC_LIB: skipped"; exit 77; }

cat >"$WORK/prog.c" <<'CEOF'
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    void *keep[100];
    for (int i = 0; i < 100; i++) {
        keep[i] = malloc(16 + (size_t)i * 24);
        memset(keep[i], i, 16);
    }
    for (int i = 0; i < 100; i += 2)
        free(keep[i]);
    if (argc > 1 && strcmp(argv[1], "break") == 0)
        ((volatile uintptr_t *)keep[51])[-1] ^= 0x5a5a; /* the block's check word */
    puts("done");
    fflush(stdout); /* the check at exit may stop the program before stdio is flushed */
    return 0;
}
CEOF
"$CC" -O1 -o "$WORK/prog" "$WORK/prog.c" || fail "compiling the program"

# run <name> <expected status> <program arguments...> with the FITALLOC_* settings exported.
run() {
    local name=$1 want=$2 rc=0
    shift 2
    LD_PRELOAD="$FITALLOC_LIB" FITALLOC_MODE=lab "$WORK/prog" "$@" >"$WORK/$name.out" \
        2>"$WORK/$name.err" || rc=$?
    [ "$rc" -eq "$want" ] || fail "$name: exit status $rc, expected $want: $(cat "$WORK/$name.err")"
    grep -qx done "$WORK/$name.out" || fail "$name: the program did not run to its end"
}

for lock in global thread arenas; do
    export FITALLOC_LOCK=$lock
    FITALLOC_LAB_CHECK=1 run "sound-$lock" 0
    grep -Eqx 'fitalloc: lab: [1-9][0-9]* heap\(s\) checked at exit: sound' "$WORK/sound-$lock.err" ||
        fail "sound-$lock: no line of the check: $(cat "$WORK/sound-$lock.err")"

    run "broken-unchecked-$lock" 0 break
    grep -q "checked at exit" "$WORK/broken-unchecked-$lock.err" &&
        fail "broken-unchecked-$lock: the check ran without FITALLOC_LAB_CHECK"

    FITALLOC_LAB_CHECK=1 run "broken-$lock" 134 break
    grep -q 'invariant broken: used block without its check word' "$WORK/broken-$lock.err" ||
        fail "broken-$lock: no report of the checker: $(cat "$WORK/broken-$lock.err")"
    echo "lock $lock: ok"
done
echo "lab/check_at_exit: ok"

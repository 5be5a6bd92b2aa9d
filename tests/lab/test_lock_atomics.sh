# Atomic instructions per uncontended malloc + free, counted exactly by callgrind's bus events
# (--collect-bus=yes, event Ge) as the difference between N and 2N iterations of a loop, to the
# nearest whole count a pair:
#   lab, FITALLOC_LOCK=global and arenas: 4 (one compare-and-swap to lock and one exchange to
#                                            unlock, in malloc and again in free)
#   lab, FITALLOC_LOCK=thread:            0 (no lock on the owner's path)
#   fast engine:                          0 (thread-local free lists)
source "$(dirname "${BASH_SOURCE[0]}")/../override/common.sh"
need_env CC
make_workdir

symbols=$(nm -D --defined-only "$FITALLOC_LIB") || fail "nm $FITALLOC_LIB"
grep -Eq ' T malloc$' <<<"$symbols" || { echo "no malloc in $FITALLOC_LIB: skipped"; exit 77; }
command -v valgrind >/dev/null || fail "valgrind not found (apt-get install valgrind)"

# One 64-byte block stays live so the heap never shrinks to nothing between iterations.
cat >"$WORK/loop.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    long n = atol(argv[1]);
    void *keep = malloc(64);
    for (long i = 0; i < n; i++) {
        void *volatile p = malloc(64);
        free(p);
    }
    free(keep);
    puts("ok");
    return 0;
}
EOF
"$CC" -O1 -fno-builtin-malloc -fno-builtin-free -o "$WORK/loop" "$WORK/loop.c" || fail "compile"

# bus_events N SETTINGS...: the Ge total of one callgrind run of the loop.
bus_events() {
    local n=$1 out="$WORK/cg.out"
    shift
    env LD_PRELOAD="$FITALLOC_LIB" FITALLOC_PURGE_THREAD=0 "$@" \
        valgrind --tool=callgrind -q --collect-bus=yes --callgrind-out-file="$out" \
        "$WORK/loop" "$n" >"$WORK/loop.out" 2>"$WORK/valgrind.err" ||
        { cat "$WORK/valgrind.err" >&2; fail "valgrind run ($*) failed"; }
    grep -qx ok "$WORK/loop.out" || fail "the loop did not finish ($*)"
    awk '/^events:/ { for (i = 2; i <= NF; i++) if ($i == "Ge") col = i }
         /^(summary|totals):/ && col { print $col; exit }' "$out"
}

# expect WHAT PER-PAIR SETTINGS...
expect() {
    local what=$1 want=$2
    shift 2
    local n=2000 a b per
    a=$(bus_events $n "$@")
    b=$(bus_events $((2 * n)) "$@")
    [ -n "$a" ] && [ -n "$b" ] || fail "$what: no Ge count in callgrind's output"
    # Rounded to the nearest whole count a pair: a one-time event that falls in one run and
    # not the other (the longer run reaching a time-based step on a busy machine: 12 events
    # once, in a CI run) is not a cost per pair; an atomic instruction in every pair adds n.
    per=$(((b - a + n / 2) / n))
    [ "$per" -eq "$want" ] ||
        fail "$what: $((b - a)) atomic instructions over $n malloc+free pairs ($per per pair), expected $want per pair"
    echo "$what: $per atomic instructions per malloc+free pair"
}

expect "lab global lock" 4 FITALLOC_MODE=lab FITALLOC_LOCK=global
expect "lab arenas" 4 FITALLOC_MODE=lab FITALLOC_LOCK=arenas
expect "lab thread heaps" 0 FITALLOC_MODE=lab FITALLOC_LOCK=thread
expect "fast engine" 0

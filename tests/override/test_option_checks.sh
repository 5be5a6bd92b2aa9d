# Options that cannot work, or that the mode in force ignores, say so in one warning line without
# FITALLOC_VERBOSE, and the program runs with the default (docs/options.md):
# - a fixed lab arena too small to hold a heap (1, 100, 4K) or too large for the address space
#   its lock mode reserves (100000G with one heap, 64G for each of 1024 thread heaps), and too
#   many arenas; a heap whose reservation failed names that cause, not "all heaps in use";
# - FITALLOC_LAB_EXACT_MAX above the largest list; lab options without the lab, secure mode with
#   the lab; a misspelt name close to an option (and not the test and bench names, far from all);
# - choices in any case (FITALLOC_MODE=LAB), as booleans;
# - FITALLOC_ONLY: statistics and trace only in the process started from the file named.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
need_env FITALLOC_LIB
make_workdir
symbols=$(nm -D --defined-only "$FITALLOC_LIB") || fail "nm -D $FITALLOC_LIB"
grep -Eq ' T malloc$' <<<"$symbols" || { echo "no interposition layer: skipped"; exit 77; }

seq 3000 | sort -r >"$WORK/numbers"
unset FITALLOC_MODE FITALLOC_POLICY FITALLOC_LOCK FITALLOC_ARENAS FITALLOC_LAB_ARENA FITALLOC_STATS \
    FITALLOC_SECURE FITALLOC_TRACE FITALLOC_VERBOSE FITALLOC_ONLY FITALLOC_LAB_EXACT_MAX

# under NAME VAR=VALUE...: sort under fitalloc with these options; stderr in $WORK/NAME.err.
# The program must work and sort right whatever the options.
under() {
    local name=$1
    shift
    env "$@" LD_PRELOAD="$FITALLOC_LIB" sort -n "$WORK/numbers" >"$WORK/$name.out" \
        2>"$WORK/$name.err" || { cat "$WORK/$name.err" >&2; fail "$name: sort failed under $*"; }
    [ "$(head -n 1 "$WORK/$name.out")" = 1 ] && [ "$(wc -l <"$WORK/$name.out")" = 3000 ] ||
        fail "$name: wrong output under $*"
}
# warns NAME TEXT VAR=VALUE...: exactly one line on stderr, which contains TEXT.
warns() {
    local name=$1 text=$2
    shift 2
    under "$name" "$@"
    grep -qF -- "$text" "$WORK/$name.err" ||
        fail "$name ($*): no warning '$text'; stderr: '$(cat "$WORK/$name.err")'"
    [ "$(wc -l <"$WORK/$name.err")" = 1 ] || fail "$name ($*): not one line: $(cat "$WORK/$name.err")"
}
quiet() {
    local name=$1
    shift
    under "$name" "$@"
    [ ! -s "$WORK/$name.err" ] || fail "$name ($*): printed '$(cat "$WORK/$name.err")'"
}

lab=(FITALLOC_MODE=lab)
for arena in 1 100 4K; do
    warns "arena-$arena" "FITALLOC_LAB_ARENA=" "${lab[@]}" FITALLOC_LAB_ARENA=$arena
    grep -qF "cannot work: with lock global a heap's arena is from 65536 to" "$WORK/arena-$arena.err" ||
        fail "arena $arena: the warning does not give the range: $(cat "$WORK/arena-$arena.err")"
done
warns arena-global-huge "FITALLOC_LAB_ARENA=107374182400000 cannot work" "${lab[@]}" \
    FITALLOC_LAB_ARENA=100000G
warns arena-thread-huge "FITALLOC_LAB_ARENA=68719476736 cannot work: with lock thread" "${lab[@]}" \
    FITALLOC_LOCK=thread FITALLOC_LAB_ARENA=64G
quiet arena-64K "${lab[@]}" FITALLOC_LAB_ARENA=64K FITALLOC_POLICY=first
quiet arena-thread-1G "${lab[@]}" FITALLOC_LOCK=thread FITALLOC_LAB_ARENA=1G
warns arenas-many "FITALLOC_ARENAS=10000000 is more than the lab's 4096 arenas; using 0" \
    "${lab[@]}" FITALLOC_LOCK=arenas FITALLOC_ARENAS=10000000
quiet arenas-4096 "${lab[@]}" FITALLOC_LOCK=arenas FITALLOC_ARENAS=4096
warns exact-max "FITALLOC_LAB_EXACT_MAX=100000 is more than the largest exact-size list; using 4096" \
    "${lab[@]}" FITALLOC_POLICY=segregated FITALLOC_LAB_EXACT_MAX=100000

# Less address space than the arenas need (ulimit -v): the heap says why it cannot be.
(
    ulimit -v 4000000
    env "${lab[@]}" FITALLOC_LOCK=thread FITALLOC_LAB_ARENA=1G LD_PRELOAD="$FITALLOC_LIB" \
        sort -n "$WORK/numbers" >/dev/null 2>"$WORK/ulimit.err"
) || true
grep -qF "fitalloc: lab: cannot create heap 0: the system reserved" "$WORK/ulimit.err" ||
    fail "ulimit -v: no word of the failed reservation: $(cat "$WORK/ulimit.err")"
! grep -q "heaps are in use" "$WORK/ulimit.err" || fail "ulimit -v: 'heaps are in use' said"

# The mode in force ignores an option.
warns policy-fast "FITALLOC_POLICY has no effect without FITALLOC_MODE=lab" FITALLOC_POLICY=best
warns lock-fast "FITALLOC_LOCK has no effect without FITALLOC_MODE=lab" FITALLOC_LOCK=thread
warns secure-lab "FITALLOC_SECURE does not apply to the lab" "${lab[@]}" FITALLOC_SECURE=1
warns secure-default-library "FITALLOC_SECURE=1 needs libfitalloc-secure.so" FITALLOC_SECURE=1
quiet secure-off-lab "${lab[@]}" FITALLOC_SECURE=0

# Choices in any case.
under upper-case FITALLOC_MODE=LAB FITALLOC_POLICY=First FITALLOC_STATS=JSON
grep -qF '"policy": "first"' "$WORK/upper-case.err" ||
    fail "FITALLOC_MODE=LAB FITALLOC_POLICY=First: not the lab's first fit: $(head -c 400 "$WORK/upper-case.err")"

# A misspelt name names the option meant; the test and bench names are far from every option.
warns misspelt "FITALLOC_STAT is not a fitalloc option (FITALLOC_STATS?); ignored" FITALLOC_STAT=1
warns lower-case "FITALLOC_stats is not a fitalloc option (FITALLOC_STATS?)" FITALLOC_stats=1
warns prefix "FITALLOC_SEC is not a fitalloc option (FITALLOC_SECURE?)" FITALLOC_SEC=1
own=()
for name in ABI_VERSION ASAN BASH BUILD BUILD_DIR CLI_REEXEC COPIES DEB DEB_RELEASE FUZZ GZIP \
    INCLUDE LAYERS LIB OBJECTS OVERRIDE PYTHON REPLAY SANITIZE SECURE_LIB SOURCE_DIR STATIC_LIB TESTS \
    TEST_SIZE VALGRIND VARIANTS; do
    own+=("FITALLOC_$name=1")
done
quiet own-names "${own[@]}"

# FITALLOC_ONLY: the statistics and the trace of sort only, not of the shell that starts it.
env FITALLOC_ONLY=sort FITALLOC_STATS=1 FITALLOC_TRACE="$WORK/t.fat" LD_PRELOAD="$FITALLOC_LIB" \
    sh -c 'sort -n "$1" >/dev/null; echo shell-done' sh "$WORK/numbers" >"$WORK/only.out" \
    2>"$WORK/only.err" || fail "FITALLOC_ONLY=sort: the shell failed: $(cat "$WORK/only.err")"
[ "$(grep -c '^fitalloc: statistics (pid' "$WORK/only.err")" = 1 ] ||
    fail "FITALLOC_ONLY=sort: not one report: $(cat "$WORK/only.err")"
ls "$WORK"/t.fat* >"$WORK/traces" 2>/dev/null
[ "$(wc -l <"$WORK/traces")" = 1 ] || fail "FITALLOC_ONLY=sort: traces $(cat "$WORK/traces")"
rm -f "$WORK"/t.fat*
quiet only-other FITALLOC_ONLY=no-such-program FITALLOC_STATS=1 FITALLOC_STAT=1 FITALLOC_VERBOSE=1
under only-this FITALLOC_ONLY=sort FITALLOC_STATS=1
grep -q '^fitalloc: statistics (pid' "$WORK/only-this.err" || fail "FITALLOC_ONLY=sort: sort did not report"
echo "override/option_checks: ok"

# fitalloc run: the program runs under fitalloc with its output and exit status (a death by a
# signal as 128 + the signal, through the shell), --stats prints fitalloc's statistics, the lab
# options put it in the lab with the policy, lock, index and arena asked for (read back from
# the lab's own report), LD_PRELOAD keeps a preload the caller had after fitalloc's, and bad
# options or programs get a message and 2, 127. --only reports for the program named and not for
# the programs it starts; --trace checks its file can be written before running anything, and
# lists the traces written, forked children's too, without changing the status.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
need_interposition

lib=$(realpath "$FITALLOC_LIB")
seq 20000 | sort -R --random-source=<(yes) >"$WORK/numbers" 2>/dev/null ||
    seq 20000 >"$WORK/numbers"

# The command finds the library it was built with, by itself.
env -u FITALLOC_LIB "$CMD" where >"$WORK/out" 2>&1 || fail "fitalloc where: $(cat "$WORK/out")"
found=$(sed -n 's/^library: //p' "$WORK/out")
[ "$(realpath "$found")" = "$lib" ] || fail "fitalloc where: library '$found', expected $lib"

# Output and exit status pass through; "--" is optional.
run_cmd run -- sh -c 'echo to-stdout; echo to-stderr >&2; exit 7'
expect_rc 7 "exit status"
[ "$(cat "$WORK/out")" = "to-stdout" ] || fail "stdout: '$(cat "$WORK/out")'"
expect_in "$WORK/err" "to-stderr" "stderr"
run_cmd run sh -c 'exit 3'
expect_rc 3 "run without --"

# The shell that runs the command reports the signal (and not the test's shell, noisily).
rc=$(bash -c "'$CMD' run -- sh -c 'kill -TERM \$\$'; echo \$?" 2>/dev/null)
[ "$rc" = 143 ] || fail "a program killed by SIGTERM: status '$rc', expected 143"

# The fast engine: statistics only with --stats.
run_cmd run -- sort -n "$WORK/numbers"
expect_rc 0 "sort"
[ "$(head -n 1 "$WORK/out")" = 1 ] && [ "$(tail -n 1 "$WORK/out")" = 20000 ] ||
    fail "sort under fitalloc printed the wrong output"
expect_not_in "$WORK/err" "fitalloc: statistics" "without --stats"
run_cmd run --stats -- sort -n "$WORK/numbers"
expect_rc 0 "sort --stats"
expect_in "$WORK/err" "fitalloc: statistics (pid" "--stats"
allocs=$(sed -n 's/^  allocs: \([0-9]*\)$/\1/p' "$WORK/err" | head -n 1)
[ -n "$allocs" ] && [ "$allocs" -gt 10 ] || fail "--stats: allocs '$allocs', expected more than 10"
expect_not_in "$WORK/err" "lab statistics" "--stats without lab options"

# The environment: LD_PRELOAD (ours first; --secure: the secure library, found beside the
# default one), --secure, --trace (absolute), no lab.
secure_lib=$(dirname "$FITALLOC_LIB")/$(basename "$FITALLOC_LIB" | sed 's/^libfitalloc/&-secure/')
[ -f "$secure_lib" ] || fail "no $secure_lib beside $FITALLOC_LIB"
LD_PRELOAD=/nonexistent/libother.so env -u FITALLOC_SECURE_LIB "$CMD" run --secure \
    --trace rel.trace -- env >"$WORK/out" 2>"$WORK/err" || fail "run env: $(cat "$WORK/err")"
expect_in "$WORK/out" "LD_PRELOAD=$secure_lib:/nonexistent/libother.so" "LD_PRELOAD with --secure"
expect_in "$WORK/out" "FITALLOC_SECURE=1" "--secure"
expect_in "$WORK/out" "FITALLOC_TRACE=$PWD/rel.trace" "--trace"
expect_not_in "$WORK/out" "FITALLOC_MODE=" "no lab option"
rm -f rel.trace*
LD_PRELOAD=/nonexistent/libother.so "$CMD" run -- env >"$WORK/out" 2>"$WORK/err" ||
    fail "run env: $(cat "$WORK/err")"
expect_in "$WORK/out" "LD_PRELOAD=$FITALLOC_LIB:/nonexistent/libother.so" "LD_PRELOAD"

# The lab: each option alone puts the program in the lab, as the lab's report says.
run_cmd run --policy first --stats -- sort -n "$WORK/numbers"
expect_rc 0 "--policy first"
expect_in "$WORK/err" "lab statistics (pid" "--policy first"
expect_in "$WORK/err" "policy first, index tree, lock global" "--policy first"
run_cmd run --lock thread --index list --arena 64M --stats -- sort -n "$WORK/numbers"
expect_rc 0 "--lock thread --index list --arena 64M"
expect_in "$WORK/err" "policy best, index list, lock thread" "--lock --index"
expect_in "$WORK/err" "arena 67108864 bytes" "--arena 64M"
run_cmd run --policy segregated -- env
expect_in "$WORK/out" "FITALLOC_MODE=lab" "--policy: FITALLOC_MODE"
expect_in "$WORK/out" "FITALLOC_POLICY=segregated" "--policy: FITALLOC_POLICY"
# --stats keeps FITALLOC_STATS=json when the caller asked for it.
FITALLOC_STATS=json "$CMD" run --stats -- true 2>"$WORK/err" || fail "FITALLOC_STATS=json run"
expect_in "$WORK/err" '{"fitalloc": {"pid":' "--stats with FITALLOC_STATS=json"

# --only: the statistics of bash alone, not of the two sorts it starts (three reports without).
run_cmd run --only --stats -- bash -c "sort -n '$WORK/numbers' >/dev/null; sort '$WORK/numbers' >/dev/null; true"
expect_rc 0 "--only"
[ "$(grep -c '^fitalloc: statistics (pid' "$WORK/err")" = 1 ] ||
    fail "--only: not one report: $(grep '^fitalloc: statistics' "$WORK/err")"
run_cmd run --only -- env
expect_in "$WORK/out" "FITALLOC_ONLY=env" "--only: FITALLOC_ONLY"

# --trace: a file that cannot be written stops the command before the program runs.
run_cmd run --trace /nonexistent/dir/t.fat -- echo ran
expect_rc 1 "--trace in a missing directory"
expect_in "$WORK/err" "fitalloc run: /nonexistent/dir/t.fat: the directory /nonexistent/dir does not exist" \
    "--trace in a missing directory"
expect_not_in "$WORK/out" "ran" "--trace in a missing directory: the program ran"
# Each trace written is listed, with its pid: the shell's and its two children's; an older
# file of the same name is not; the status is the program's.
echo old >"$WORK/t.fat.1"
run_cmd run --trace "$WORK/t.fat" -- sh -c "sort -n '$WORK/numbers' >/dev/null; ls / >/dev/null; exit 4"
expect_rc 4 "--trace: the status"
[ "$(grep -c '^fitalloc run: trace of pid [0-9]*: ' "$WORK/err")" = 3 ] ||
    fail "--trace: not three traces listed: $(cat "$WORK/err")"
for f in $(sed -n 's/^fitalloc run: trace of pid [0-9]*: //p' "$WORK/err"); do
    [ -s "$f" ] || fail "--trace: $f listed, not written"
done
expect_in "$WORK/err" ": $WORK/t.fat" "--trace: the first file"
grep -q 't\.fat\.1$' "$WORK/err" && fail "--trace: the older t.fat.1 listed"
rc=$(bash -c "'$CMD' run --trace '$WORK/k.fat' -- sh -c 'kill -TERM \$\$'; echo \$?" 2>"$WORK/err")
[ "$rc" = 143 ] || fail "--trace: a program killed by SIGTERM: status '$rc', expected 143"
expect_in "$WORK/err" "trace of pid" "--trace: the trace of a killed program"
rm -f "$WORK"/*.fat*

# Bad options and programs.
run_cmd run --policy fastest -- true
expect_rc 2 "--policy fastest"
expect_in "$WORK/err" "invalid choice: 'fastest'" "--policy fastest"
run_cmd run --lock none -- true
expect_rc 2 "--lock none"
run_cmd run --arena 12Q -- true
expect_rc 2 "--arena 12Q"
expect_in "$WORK/err" "'12Q' is not a size" "--arena 12Q"
run_cmd run
expect_rc 2 "no program"
expect_in "$WORK/err" "no program to run" "no program"
run_cmd run -- /nonexistent/program
expect_rc 127 "a missing program"
expect_in "$WORK/err" "fitalloc run: /nonexistent/program: command not found" "a missing program"
FITALLOC_LIB=/nonexistent/libfitalloc.so "$CMD" run -- true 2>"$WORK/err" && fail "a bad FITALLOC_LIB ran"
expect_in "$WORK/err" "FITALLOC_LIB=/nonexistent/libfitalloc.so: no such file" "a bad FITALLOC_LIB"
echo "command/run: ok"

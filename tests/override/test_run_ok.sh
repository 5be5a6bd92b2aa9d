# The helpers of common.sh report what they saw: run_ok passes a command that succeeds, and for
# one that fails it stops the test with the command's stderr and its real exit status (it once
# read $? after `if !`, which is always 0, and so reported "exited with 0" for every failure).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
make_workdir

run_ok "true" true

rc=0
(run_ok "a failing command" sh -c 'echo why it failed >&2; exit 3') 2>"$WORK/fail.err" || rc=$?
[ "$rc" -eq 1 ] || fail "run_ok on a command exiting 3: the test exited $rc, expected 1"
grep -q '^FAIL: a failing command exited with 3$' "$WORK/fail.err" ||
    fail "run_ok's report does not give the status 3: $(cat "$WORK/fail.err")"
grep -q '^why it failed$' "$WORK/fail.err" ||
    fail "run_ok's report does not show the command's stderr: $(cat "$WORK/fail.err")"
echo "override/run_ok: ok"

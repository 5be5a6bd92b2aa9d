#!/usr/bin/env bash
# The default mode's guards (docs/security.md, "The default mode's guards"), under LD_PRELOAD:
# a write running 1 MiB past an 8 B, a 4 KiB and a 256 KiB block faults (the segment's memory
# that no page has handed out is inaccessible); a 1- or 32-byte write past the last block of a
# fresh page is reported by the next malloc that provisions a block there; a freed 256 KiB block
# (one of the first big blocks freed) faults when written or read, and a second free of it is
# reported; the last of the first 16 freed gives its memory back while it is held (no page of it
# resident). Program: guards.c.
source "$(dirname "$0")/common.sh"
need_env FITALLOC_LIB CC
make_workdir
here=$(cd "$(dirname "$0")" && pwd)
"$CC" -O1 -fno-builtin-malloc -fno-builtin-free -o "$WORK/guards" "$here/guards.c" || fail "cannot build guards.c"

# run CASE...: the program's exit status in $status, its stderr in $WORK/err.
run() {
    status=0
    # In a subshell (not its last command: bash would exec it), whose stderr is dropped: bash
    # reports a child killed by a signal there.
    (LD_PRELOAD="$FITALLOC_LIB" "$WORK/guards" "$@" >"$WORK/out" 2>"$WORK/err"; exit $?) 2>/dev/null ||
        status=$?
}

for size in 8 4096 262144; do
    for how in loop memcpy; do
        run runaway "$size" "$how"
        # 139: killed by SIGSEGV
        [ "$status" -eq 139 ] || fail "1 MiB past a $size-byte block ($how): status $status," \
            "not a fault: $(cat "$WORK/err" "$WORK/out")"
    done
done

for bytes in 1 32; do
    run fresh "$bytes"
    block=$(sed -n 's/^block //p' "$WORK/err")
    expected="fitalloc: malloc(): heap overflow past the 3072-byte block at $block"
    [ "$status" -eq 134 ] || fail "$bytes bytes past a fresh block: status $status, not SIGABRT"
    grep -qF "$expected" "$WORK/err" || fail "$bytes bytes past a fresh block: stderr lacks" \
        "\"$expected\": $(cat "$WORK/err")"
done

for how in write read; do
    run freed 262144 "$how"
    [ "$status" -eq 139 ] || fail "a freed 256 KiB block, $how: status $status, not a fault:" \
        "$(cat "$WORK/err" "$WORK/out")"
done
run freed 262144 free
block=$(sed -n 's/^block //p' "$WORK/err")
expected="fitalloc: free(): double free of $block (262144-byte block)"
[ "$status" -eq 134 ] && grep -qF "$expected" "$WORK/err" ||
    fail "a freed 256 KiB block freed again: status $status, stderr lacks \"$expected\":" \
        "$(cat "$WORK/err")"

run resident 262144
[ "$status" -eq 0 ] && grep -q "^resident 0 of 64" "$WORK/out" ||
    fail "the 16th freed 256 KiB block held: status $status, not all its pages given back:" \
        "$(cat "$WORK/out" "$WORK/err")"

run fits
[ "$status" -eq 0 ] && grep -q "not caught" "$WORK/out" ||
    fail "a block written only inside: status $status: $(cat "$WORK/err")"
echo "override/default_guards: ok"

#!/usr/bin/env bash
# tools/package.sh installs what it needs through tools/deps.sh, as the other commands do, and
# fails, naming the tool, when one is still missing after that; it no longer skips (77). Here
# pandoc is taken out of PATH while its Debian package stays installed (so tools/deps.sh has
# nothing to install): the command must stop at once with status 1 and say so.
set -euo pipefail
work="$FITALLOC_BUILD_DIR/tests/tools/package-needs"
rm -rf "$work"
mkdir -p "$work/bin"
fail() {
    echo "FAIL: $*"
    exit 1
}
command -v dpkg-query >/dev/null || { echo "no dpkg on this machine: skipped"; exit 77; }
# What tools/package.sh needs, installed (as it would itself) before pandoc is hidden.
bash "$FITALLOC_SOURCE_DIR/tools/deps.sh" package --if-missing >"$work/deps.log" 2>&1 || {
    echo "the packages tools/package.sh needs are missing and cannot be installed here: skipped"
    exit 77
}

# Every command of the system but pandoc.
for dir in /usr/local/bin /usr/bin /bin /usr/sbin /sbin; do
    for tool in "$dir"/*; do
        name=${tool##*/}
        [[ "$name" == pandoc || -e "$work/bin/$name" ]] || ln -s "$tool" "$work/bin/$name"
    done
done
rc=0
PATH="$work/bin" bash "$FITALLOC_SOURCE_DIR/tools/package.sh" >"$work/out" 2>&1 || rc=$?
((rc == 1)) || fail "without pandoc, tools/package.sh exited with $rc, not 1: $(cat "$work/out")"
grep -q "FAIL: pandoc not found" "$work/out" || fail "the message does not name pandoc: $(cat "$work/out")"
! grep -q "skipped" "$work/out" || fail "tools/package.sh still skips: $(cat "$work/out")"
echo "tools/package.sh without pandoc: $(cat "$work/out")"

#!/usr/bin/env bash
# Real programs run unchanged in secure mode: python3, sqlite3, perl, git and gcc (compiling and
# running a program) each do some allocation-heavy work under LD_PRELOAD=libfitalloc-secure.so with
# FITALLOC_SECURE=1, and their output and exit status must be those of the same command under
# the C library's malloc. A program that is not installed is named and left out; the test
# fails if none is there.
set -euo pipefail
: "${FITALLOC_SECURE_LIB:?FITALLOC_SECURE_LIB is not set}"
if ! nm -D --defined-only "$FITALLOC_SECURE_LIB" | grep -qE ' T malloc$'; then
    echo "no interposition layer in $FITALLOC_SECURE_LIB: skipped"
    exit 77
fi
unset LD_PRELOAD FITALLOC_MODE FITALLOC_TRACE FITALLOC_STATS
work=$(mktemp -d "${TMPDIR:-/tmp}/fitalloc-real.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

cat >prog.c <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void)
{
    unsigned long sum = 0;
    char **v = calloc(50000, sizeof *v);
    for (int i = 0; i < 50000; i++) {
        v[i] = malloc(1 + i % 300);
        memset(v[i], i & 0xff, 1 + i % 300);
    }
    for (int i = 0; i < 50000; i += 3) {
        free(v[i]);
        v[i] = strdup("x");
    }
    for (int i = 0; i < 50000; i++) {
        sum += (unsigned char)v[i][0];
        free(v[i]);
    }
    free(v);
    printf("%lu\n", sum);
    return 0;
}
C

# name, then the command (run with bash -c).
programs=(
    python3 'python3 -S -c "import json, hashlib; d = {str(i): [i, str(i) * 3] for i in range(30000)}; print(hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest())"'
    sqlite3 'sqlite3 :memory: "create table t(a, b); with recursive c(x) as (select 1 union all select x + 1 from c where x < 30000) insert into t select x, printf(\"%08d-%s\", x, hex(x * 7919)) from c; create index i on t(b); select count(*), sum(a), max(b) from t where b like \"0001%\";"'
    perl 'perl -e "my %h; \$h{\$_} = join(\",\", 1 .. (\$_ % 50)) for 1 .. 30000; my \$s = 0; \$s += length(\$h{\$_}) for keys %h; print \"\$s\\n\";"'
    git 'rm -rf repo && git init -q repo && for i in $(seq 200); do echo "line $i" > repo/f$i; done && git -C repo add . && GIT_AUTHOR_DATE="2026-01-01T00:00:00Z" GIT_COMMITTER_DATE="2026-01-01T00:00:00Z" git -C repo -c user.name=t -c user.email=t@t commit -q -m one && git -C repo rev-parse HEAD && git -C repo log --stat --format=%s | tail -n 1'
    gcc 'gcc -O2 -o prog prog.c && ./prog'
)

ran=0 failed=0
for ((k = 0; k < ${#programs[@]}; k += 2)); do
    name=${programs[k]} cmd=${programs[k + 1]}
    if ! command -v "$name" >/dev/null; then
        echo "$name: not installed, left out"
        continue
    fi
    want_rc=0 got_rc=0
    want=$(bash -c "$cmd" 2>&1) || want_rc=$?
    got=$(LD_PRELOAD="$FITALLOC_SECURE_LIB" FITALLOC_SECURE=1 bash -c "$cmd" 2>&1) || got_rc=$?
    if [[ "$got" != "$want" || $got_rc != "$want_rc" ]]; then
        echo "FAIL: $name under FITALLOC_SECURE=1: exit $got_rc, output:"
        printf '%s\n' "$got" | head -n 5
        echo "--- under the C library's malloc: exit $want_rc, output:"
        printf '%s\n' "$want" | head -n 5
        failed=1
    else
        echo "ok: $name ($(printf '%s' "$want" | head -c 60))"
    fi
    ran=$((ran + 1))
done
((ran > 0)) || { echo "FAIL: none of the programs is installed"; exit 1; }
exit $failed

# python3 under LD_PRELOAD=libfitalloc.so: a 1e6-entry dict (smoke) is built,
# sorted and checksummed; the output equals the run without fitalloc, and with
# PYTHONMALLOC=malloc (every object through malloc) the stats show > 100000
# allocations.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
make_workdir

command -v python3 >/dev/null || { echo "python3 not installed: skipped"; exit 77; }
# the real interpreter, not a wrapper script (pyenv shims are bash scripts)
PY=$(python3 -c 'import sys; print(sys.executable)') || fail "python3 does not run"
[ -x "$PY" ] || fail "python3 executable '$PY' not found"

n=$((1000000 * $(test_scale)))
cat >"$WORK/prog.py" <<'PYEOF'
import hashlib, sys
n = int(sys.argv[1])
d = {}
for i in range(n):
    d["k%09d" % ((i * 7919) % n)] = i * 31
# churn: delete a third, put back a sixth with other values
for i in range(0, n, 3):
    del d["k%09d" % i]
for i in range(0, n, 6):
    d["k%09d" % i] = str(i) * (i % 5)
items = sorted(d.items(), key=lambda kv: kv[0][::-1])
h = hashlib.sha256("\n".join("%s=%s" % kv for kv in items).encode())
blobs = [bytes([i & 255]) * (i % 3000) for i in range(20000)]
total = sum(len(b) for b in blobs)
del blobs
print(len(d), total, h.hexdigest())
PYEOF

run_ok "python3 (libc)" "$PY" "$WORK/prog.py" "$n" >"$WORK/ref.txt"
[ -s "$WORK/ref.txt" ] || fail "no output without fitalloc"

LD_PRELOAD="$FITALLOC_LIB" FITALLOC_STATS=1 PYTHONMALLOC=malloc \
    "$PY" "$WORK/prog.py" "$n" >"$WORK/malloc.txt" 2>"$WORK/malloc.err" ||
    { tail -n 40 "$WORK/malloc.err" >&2; fail "python3 (PYTHONMALLOC=malloc) under fitalloc failed"; }
cmp "$WORK/ref.txt" "$WORK/malloc.txt" || fail "output differs under fitalloc (PYTHONMALLOC=malloc)"
assert_allocs_gt "$WORK/malloc.err" 100000 "python3 PYTHONMALLOC=malloc"

LD_PRELOAD="$FITALLOC_LIB" FITALLOC_STATS=1 \
    "$PY" "$WORK/prog.py" "$n" >"$WORK/pymalloc.txt" 2>"$WORK/pymalloc.err" ||
    { tail -n 40 "$WORK/pymalloc.err" >&2; fail "python3 under fitalloc failed"; }
cmp "$WORK/ref.txt" "$WORK/pymalloc.txt" || fail "output differs under fitalloc (pymalloc)"
assert_allocs_gt "$WORK/pymalloc.err" 1000 "python3 (pymalloc)"
echo "override/python: ok ($(cat "$WORK/ref.txt"))"

# sort(1) under LD_PRELOAD=libfitalloc.so gives the same output as without it,
# and FITALLOC_STATS=1 shows the allocations were fitalloc's.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
make_workdir
export LC_ALL=C

scale=$(test_scale)
lines=$((500000 * scale)) # ~20 MB (smoke), ~200 MB (real)
word_lines "$lines" 20240601 >"$WORK/in.txt" || fail "generating input"
size=$(stat -c %s "$WORK/in.txt")
[ "$size" -gt $((15000000 * scale)) ] || fail "input only $size bytes"

check_sort() { # name, more-allocations-than, sort arguments...
    local name=$1 min=$2
    shift 2
    run_ok "sort $* (libc)" sort "$@" -o "$WORK/$name.ref" "$WORK/in.txt"
    if ! LD_PRELOAD="$FITALLOC_LIB" FITALLOC_STATS=1 sort "$@" -T "$WORK" -o "$WORK/$name.out" \
        "$WORK/in.txt" 2>"$WORK/$name.err"; then
        tail -n 40 "$WORK/$name.err" >&2
        fail "sort $* under fitalloc failed"
    fi
    cmp "$WORK/$name.ref" "$WORK/$name.out" || fail "sort $*: output differs under fitalloc"
    if [ "$name" != unique ]; then
        [ "$(wc -l <"$WORK/$name.out")" -eq "$lines" ] || fail "sort $*: wrong line count"
    fi
    assert_allocs_gt "$WORK/$name.err" "$min" "sort $*"
}

# one big buffer: few allocations, but they must be fitalloc's
check_sort plain 0
# several threads and a small buffer: many temporary files and merges
check_sort keys 1000 -k2,2 -k1,1n --parallel=2 -S 256K
check_sort unique 1000 -u -n -S 128K
sort -c -k2,2 -k1,1n "$WORK/keys.out" || fail "output not sorted"
echo "override/sort: ok"

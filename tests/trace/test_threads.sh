# FITALLOC_TRACE with threads (threads.c): 4 threads each make 3,000 steps of malloc, calloc,
# aligned_alloc, realloc and free of random sizes (several buffers of records each), hand
# blocks to each other to be freed there, and exit; main joins them and leaves with _exit(0),
# so no exit handler writes anything: the threads' records must have been written at their
# exit. The trace, read back by the test's own reader:
#   - every block's checksum right, no partial block;
#   - each thread's records in the file numbered from 0 with growing times (its buffers in
#     order, none lost);
#   - the 4 threads have the numbers 1..4 (main, whose unwritten buffer died with _exit, is
#     0), and each thread's log is, exactly and in order, a run of the records of one of them
#     (the C library's own frees at thread exit follow it);
#   - replayed in program order, every free and realloc gets a block that is live (allocated
#     earlier, possibly by another thread), no allocation returns a live block.
# Run in the fast engine, again with every ended thread's heap abandoned at once (the frees
# other threads then make into its pages must be recorded too), and in the lab with a heap per
# thread.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

compile "$WORK/threads" "$TRACE_TESTS/threads.c"

for mode in fast abandon lab; do
    extra=()
    [[ $mode == abandon ]] && extra=(FITALLOC_PARKED_HEAPS=0)
    [[ $mode == lab ]] && extra=(FITALLOC_MODE=lab FITALLOC_LOCK=thread)
    env -u FITALLOC_MODE "${extra[@]}" FITALLOC_TRACE="$WORK/$mode.fat" LD_PRELOAD="$FITALLOC_LIB" \
        "$WORK/threads" >"$WORK/$mode.log" 2>"$WORK/err" ||
        { cat "$WORK/err" >&2; fail "$mode: the program failed"; }
    check_trace '
t = tr.read(sys.argv[1])
assert t.partial == 0, f"{t.partial} bytes of a partial block"
tr.check_order(t.records)
logs, current = {}, None
for line in open(sys.argv[2]):
    if line.startswith("thread "):
        current = logs.setdefault(int(line.split()[1]), [])
    elif line.strip():
        current.append(tuple(int(x) for x in line.split()))
assert sorted(logs) == [0, 1, 2, 3], sorted(logs)
numbers = {r.thread for r in t.records}
assert numbers == {1, 2, 3, 4}, f"thread numbers {sorted(numbers)}"
owner = {}
for worker, calls in logs.items():
    assert len(calls) > 3000, (worker, len(calls))
    run = tr.find_run(t.records, calls)
    thread = run[0].thread
    assert thread not in owner, f"threads {owner.get(thread)} and {worker} share number {thread}"
    owner[thread] = worker
tr.check_live(t.records)
print(f"{sys.argv[3]}: {len(t.records)} records, 4 threads exact")
' "$WORK/$mode.fat" "$WORK/$mode.log" "$mode"
done
echo "trace/threads: ok"

# FITALLOC_TRACE across fork and exec (fork.c): the parent allocates and frees ("before"),
# forks; the child allocates and frees ("child") and exits; the parent goes on ("after"), then
# starts another traced program with fork + exec. Read back by the test's own reader:
#   - path: the parent's header (its pid, parent_pid 0); "before" and "after" exactly, in
#     order; nothing of the child;
#   - path.CHILD: a valid header with the child's pid and parent_pid = the parent's pid, the
#     child's calls exactly, and none of the parent's records (the ones buffered at the fork
#     are the parent's to write); its times go on from the parent's (all after "before");
#   - path.EXEC: the exec'd program (it found path being written by a running process) writes
#     its own file with its pid and parent_pid = the parent's pid; path is not truncated;
#   - a wrapper that execs in the same process (env) leaves path to the program it starts;
#   - every file: checksums right, no partial block, each thread's records numbered from 0 with
#     growing times, frees of live blocks.
# Both in the fast engine and in the lab.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

compile "$WORK/fork" "$TRACE_TESTS/fork.c"
cat >"$WORK/small.c" <<'CEOF'
#include <stdlib.h>
int main(void)
{
    for (int i = 0; i < 100; i++)
        free(malloc(4321));
    return 0;
}
CEOF
compile "$WORK/small" "$WORK/small.c"

for mode in fast lab; do
    dir="$WORK/$mode"
    mkdir -p "$dir"
    extra=()
    [[ $mode == lab ]] && extra=(FITALLOC_MODE=lab)
    env -u FITALLOC_MODE "${extra[@]}" FITALLOC_TRACE="$dir/t.fat" LD_PRELOAD="$FITALLOC_LIB" \
        "$WORK/fork" "$dir" "$WORK/small" >"$WORK/out" 2>"$WORK/err" ||
        { cat "$WORK/err" >&2; fail "$mode: the program failed"; }
    read -r _ parent < <(grep '^parent' "$dir/pids")
    read -r _ child < <(grep '^child' "$dir/pids")
    read -r _ execd < <(grep '^exec' "$dir/pids")
    [[ -f $dir/t.fat.$child ]] || { ls -l "$dir" >&2; fail "$mode: no file t.fat.$child for the child"; }
    [[ -f $dir/t.fat.$execd ]] || { ls -l "$dir" >&2; fail "$mode: no file t.fat.$execd for the exec'd program"; }
    check_trace '
d, parent, child, execd, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
logs = {n: tr.read_log(f"{d}/{n}.log") for n in ("before", "child", "after")}
files = {"parent": f"{d}/t.fat", "child": f"{d}/t.fat.{child}", "exec": f"{d}/t.fat.{execd}"}
traces = {}
for name, path in files.items():
    t = tr.read(path)
    assert t.partial == 0, (path, t.partial)
    assert t.header["mode"] == mode, (path, t.header)
    tr.check_order(t.records)
    tr.check_live(t.records, foreign_frees_ok=(name == "child"))
    traces[name] = t
p, c, e = traces["parent"], traces["child"], traces["exec"]
assert p.header["pid"] == parent and p.header["parent_pid"] == 0, p.header
assert c.header["pid"] == child and c.header["parent_pid"] == parent, c.header
assert e.header["pid"] == execd and e.header["parent_pid"] == parent, e.header
assert c.header["start_ns"] == p.header["start_ns"], "the child counts time from the same start"
before = tr.find_run(p.records, logs["before"])
tr.find_run(p.records, logs["after"])
tr.find_run(c.records, logs["child"])
def absent(records, log, what):
    try:
        tr.find_run(records, log)
    except tr.TraceError:
        return
    raise AssertionError(what)
absent(p.records, logs["child"], "the child calls are in the parent trace")
absent(c.records, logs["before"], "the parent records buffered at the fork are in the child trace")
assert min(r.time_ns for r in c.records) > max(r.time_ns for r in before), \
    "the times of the child do not go on from those of the parent"
assert sum(1 for r in e.records if r.op == tr.MALLOC and r.size == 4321) == 100, "exec: 100 mallocs"
assert not any(r.size == 4321 for r in p.records), "the exec program wrote into the parent trace"
print(f"{sys.argv[6]}: parent {len(p.records)}, child {len(c.records)}, exec {len(e.records)} records")
' "$dir" "$parent" "$child" "$execd" "$([[ $mode == lab ]] && echo 1 || echo 0)" "$mode"
done

# env execs the program in the same process: the program replaces env's trace, in path itself.
rm -f "$WORK/w.fat"*
traced "$WORK/w.fat" env "$WORK/small" || fail "env wrapper run"
[[ $(ls "$WORK"/w.fat* | wc -l) -eq 1 ]] || { ls "$WORK" >&2; fail "the wrapper run made more than one file"; }
check_trace '
t = tr.read(sys.argv[1])
assert sum(1 for r in t.records if r.op == tr.MALLOC and r.size == 4321) == 100
' "$WORK/w.fat"
echo "trace/fork: ok"

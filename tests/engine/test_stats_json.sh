# ctest labels: reliability
# FITALLOC_STATS=json: at exit, stderr holds exactly one JSON object (python3 json.load of the
# whole of stderr) with the expected keys and consistent values, in both engines:
#   fast engine: {"fitalloc": {pid, allocs, frees, bytes_in_use, large_*, reserved, committed,
#     peak_committed, purged, segments, threads, abandoned, mesh_detached, mesh_saved,
#     mesh_returned, mesh_merges, size_classes: [{block, allocs, frees,
#     live}]}}: integers; pid is the program's; allocs = the size classes' + large_allocs (frees
#     too); live = allocs - frees per class; at least the allocations the program made; the
#     program's large blocks counted; two threads seen.
#   lab (FITALLOC_MODE=lab, each FITALLOC_LOCK, a chosen FITALLOC_POLICY): {"fitalloc_lab":
#     {pid, policy, index, lock, coalesce, arena, mallocs, frees, ..., heaps,
#     frag_free_over_heap, frag_largest_over_free, frag_granted_over_requested, size_classes:
#     [{block, mallocs, requested, granted}]}}: the options read back (TLSF and the buddy system
#     name their own index), counters integers, mallocs at least the program's, external
#     fragmentation in [0, 1], granted at least requested, the size classes adding up.
# Also with a program that closes stderr before exit (fitalloc keeps its own copy).
source "$(dirname "${BASH_SOURCE[0]}")/../override/common.sh"
need_env CC
make_workdir
command -v python3 >/dev/null || fail "python3 not found"

symbols=$(nm -D --defined-only "$FITALLOC_LIB") || fail "nm -D $FITALLOC_LIB"
grep -Eq ' T malloc$' <<<"$symbols" || { echo "no interposition layer in $FITALLOC_LIB: skipped"; exit 77; }

cat >"$WORK/prog.c" <<'CEOF'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* 20000 small and medium blocks, 10 large ones (1 MiB), on two threads; prints its pid. */
static void *work(void *arg)
{
    (void)arg;
    for (int i = 0; i < 10000; i++) {
        size_t n = 1 + (size_t)(i * 37 % 30000);
        char *p = malloc(n);
        if (!p)
            abort();
        memset(p, 1, n);
        if (i % 3)
            free(p);
    }
    for (int i = 0; i < 5; i++) {
        char *p = malloc(1 << 20);
        if (!p)
            abort();
        p[0] = 1;
        free(p);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t t;
    if (pthread_create(&t, NULL, work, NULL) != 0)
        return 1;
    work(NULL);
    pthread_join(t, NULL);
    printf("%d\n", (int)getpid());
    fflush(stdout);
    if (argc > 1 && strcmp(argv[1], "close") == 0)
        close(2);
    return 0;
}
CEOF
"$CC" -O1 -fno-builtin-malloc -fno-builtin-free -pthread -o "$WORK/prog" "$WORK/prog.c" \
    2>"$WORK/cc.err" || { cat "$WORK/cc.err" >&2; fail "compiling the test program"; }

cat >"$WORK/check.py" <<'PYEOF'
import json, sys

path, pid, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with open(path) as f:
    doc = json.load(f)  # the whole of stderr: one JSON object, nothing else
errors = []
def expect(cond, msg):
    if not cond:
        errors.append(msg)
def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0

if mode == "fast":
    expect(list(doc) == ["fitalloc"], f"top-level keys {list(doc)}")
    s = doc.get("fitalloc", {})
    keys = ["pid", "allocs", "frees", "bytes_in_use", "large_allocs", "large_frees",
            "large_in_use", "reserved", "committed", "peak_committed", "purged", "segments",
            "threads", "abandoned", "mesh_detached", "mesh_saved", "mesh_returned",
            "mesh_merges", "size_classes"]
    expect(list(s) == keys, f"keys {list(s)}, expected {keys}")
    for k in keys[:-1]:
        expect(is_int(s.get(k)), f"{k} = {s.get(k)!r} is not a count")
    expect(s.get("pid") == pid, f"pid {s.get('pid')} != {pid}")
    classes = s.get("size_classes", [])
    expect(isinstance(classes, list) and classes, "size_classes empty")
    allocs, frees = s.get("large_allocs", 0), s.get("large_frees", 0)
    last = 0
    for c in classes:
        expect(list(c) == ["block", "allocs", "frees", "live"], f"class keys {list(c)}")
        expect(all(is_int(c.get(k)) for k in ("block", "allocs", "frees", "live")), f"class {c}")
        expect(c.get("live") == c.get("allocs", 0) - c.get("frees", 0), f"class {c}: live")
        expect(c.get("block", 0) > last, f"class {c} not in increasing block order")
        last = c.get("block", 0)
        allocs += c.get("allocs", 0)
        frees += c.get("frees", 0)
    expect(s.get("allocs") == allocs, f"allocs {s.get('allocs')} != sum {allocs}")
    expect(s.get("frees") == frees, f"frees {s.get('frees')} != sum {frees}")
    expect(s.get("allocs", 0) >= 20010, f"allocs {s.get('allocs')} < the program's 20010")
    expect(s.get("frees", 0) <= s.get("allocs", 0), "more frees than allocs")
    expect(s.get("large_allocs", 0) >= 10, f"large_allocs {s.get('large_allocs')} < 10")
    expect(s.get("threads", 0) >= 2, f"threads {s.get('threads')} < 2")
    expect(s.get("committed", 0) <= s.get("reserved", 0), "committed > reserved")
    expect(s.get("committed", 0) <= s.get("peak_committed", 0), "committed > peak")
else:
    lock, policy = mode.split("-")
    expect(list(doc) == ["fitalloc_lab"], f"top-level keys {list(doc)}")
    s = doc.get("fitalloc_lab", {})
    counters = ["mallocs", "frees", "reuses", "grows", "splits", "coalesces", "blocks",
                "requested", "granted", "max_heap", "free_blocks", "free_bytes", "largest_free",
                "average_free_block", "heap_bytes", "free_space_with_headers", "direct_allocs",
                "direct_frees", "direct_bytes", "lock_acquisitions", "lock_contended",
                "futex_waits", "futex_wakes", "heaps"]
    keys = (["pid", "policy", "index", "lock", "coalesce", "arena"] + counters +
            ["frag_free_over_heap", "frag_largest_over_free", "frag_granted_over_requested",
             "size_classes"])
    expect(list(s) == keys, f"keys {list(s)}, expected {keys}")
    expect(s.get("pid") == pid, f"pid {s.get('pid')} != {pid}")
    expect(s.get("policy") == policy, f"policy {s.get('policy')!r} != {policy!r}")
    expect(s.get("lock") == lock, f"lock {s.get('lock')!r} != {lock!r}")
    own_index = policy if policy in ("tlsf", "buddy") else "tree"
    expect(s.get("index") == own_index, f"index {s.get('index')!r}")
    expect(s.get("coalesce") is True, f"coalesce {s.get('coalesce')!r}")
    expect(s.get("arena") == 0, f"arena {s.get('arena')!r}")
    for k in counters:
        expect(is_int(s.get(k)), f"{k} = {s.get(k)!r} is not a count")
    expect(s.get("mallocs", 0) >= 20010, f"mallocs {s.get('mallocs')} < the program's 20010")
    expect(s.get("frees", 0) <= s.get("mallocs", 0), "more frees than mallocs")
    expect(s.get("heaps", 0) >= (2 if lock == "thread" else 1), f"heaps {s.get('heaps')}")
    for k in ("frag_free_over_heap", "frag_largest_over_free"):
        v = s.get(k)
        expect(isinstance(v, float) and 0 <= v <= 1, f"{k} = {v!r} not in [0, 1]")
    # Internal fragmentation: every malloc is granted at least what it asked for, and the size
    # classes add up to the totals.
    expect(s.get("granted", 0) >= s.get("requested", 0) > 0, "granted < requested")
    ratio = s.get("frag_granted_over_requested")
    expect(isinstance(ratio, float) and ratio >= 1, f"granted/requested = {ratio!r}")
    classes = s.get("size_classes", [])
    expect(isinstance(classes, list) and classes, "no size classes")
    for f in ("mallocs", "requested", "granted"):
        total = sum(c.get(f, 0) for c in classes if isinstance(c, dict))
        expect(total == s.get(f), f"size classes: {f} {total} != {s.get(f)}")
if errors:
    print(f"{mode}: " + "; ".join(errors), file=sys.stderr)
    sys.exit(1)
print(f"{mode}: ok")
PYEOF

# run NAME fast|LOCK-POLICY [ENV...]: run the program with FITALLOC_STATS=json, check its stderr.
run() {
    local name=$1 mode=$2 arg=
    shift 2
    [[ "$name" == *-closed ]] && arg=close
    env -u FITALLOC_MODE -u FITALLOC_LOCK -u FITALLOC_POLICY -u FITALLOC_VERBOSE "$@" \
        FITALLOC_STATS=json LD_PRELOAD="$FITALLOC_LIB" "$WORK/prog" $arg \
        >"$WORK/$name.out" 2>"$WORK/$name.err" ||
        { cat "$WORK/$name.err" >&2; fail "$name: the program failed"; }
    local pid
    pid=$(head -n 1 "$WORK/$name.out")
    python3 "$WORK/check.py" "$WORK/$name.err" "$pid" "$mode" ||
        { echo "---- stderr of $name ----" >&2; head -c 3000 "$WORK/$name.err" >&2; echo >&2;
          fail "$name: FITALLOC_STATS=json output is wrong"; }
}

run fast fast
run fast-closed fast
run lab-global global-best FITALLOC_MODE=lab
run lab-global-first global-first FITALLOC_MODE=lab FITALLOC_LOCK=global FITALLOC_POLICY=first
run lab-thread thread-segregated FITALLOC_MODE=lab FITALLOC_LOCK=thread FITALLOC_POLICY=segregated
run lab-arenas arenas-next FITALLOC_MODE=lab FITALLOC_LOCK=arenas FITALLOC_POLICY=next
run lab-thread-buddy thread-buddy FITALLOC_MODE=lab FITALLOC_LOCK=thread FITALLOC_POLICY=buddy
run lab-global-tlsf global-tlsf FITALLOC_MODE=lab FITALLOC_LOCK=global FITALLOC_POLICY=tlsf
run lab-arenas-closed arenas-worst FITALLOC_MODE=lab FITALLOC_LOCK=arenas FITALLOC_POLICY=worst
echo "engine/stats_json: ok"

# ctest labels: api
# fitalloc profile end to end (issue 41's acceptance program, tests/command/profile_sites.c,
# with little churn): the library's own profiles at the peak name hold_big_blocks,
# hold_small_blocks and leak_pages, in that order, within 15 %, 25 % and 25 % of their 64, 8
# and 4 MiB (a sample every 16 KiB: 256 samples for the smallest, so 25 % is 4 standard
# deviations); the exit profile names the leak (and at most two stray samples); the flame graph
# is written; the lab gives the same sites, and under the buddy system the bytes it grants
# beyond the live ones by site; the status is the program's.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
need_interposition
need_matplotlib
cd "$WORK"
"${CC:-cc}" -O2 -g -o sites "$HERE/profile_sites.c" -ldl || fail "cc profile_sites.c"

# check_sites WHAT: the report in out has the three sites at the peak, the leak alone at exit.
check_sites() {
    sed -n '/^at the peak of pid/,/^$/p' out >peak.txt
    sed -n '/^at exit (not freed) of pid/,/^$/p' out >exit.txt
    "$PYTHON" - peak.txt exit.txt "$1" <<'PY' || fail "$1: $(cat out)"
import re, sys
units = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
def sites(path):
    rows = re.findall(r"^ +([\d.]+) (B|KiB|MiB|GiB) +[\d.]+% +[\d,]+(?: +[\d.]+ [KMG]?i?B)?  (\S+)",
                      open(path).read(), re.M)
    return [(name, float(v) * units[u]) for v, u, name in rows]
peak, leaks = sites(sys.argv[1]), sites(sys.argv[2])
want = [("hold_big_blocks", 64, 0.15), ("hold_small_blocks", 8, 0.25), ("leak_pages", 4, 0.25)]
assert [n for n, _ in peak[:3]] == [w[0] for w in want], f"{sys.argv[3]}: peak sites {peak}"
for (name, got), (_, mib, tol) in zip(peak, want):
    assert abs(got / (mib << 20) - 1) <= tol, f"{sys.argv[3]}: {name} {got / (1 << 20):.2f} MiB"
# The leak first, and alone but for a stray sample or two (16 KiB each) of blocks the C
# library keeps to the end, such as the buffer of dlerror that a dlsym at start leaves.
assert leaks and leaks[0][0] == "leak_pages", f"{sys.argv[3]}: exit sites {leaks}"
assert sum(b for _, b in leaks[1:]) <= 32 << 10, f"{sys.argv[3]}: exit sites {leaks}"
assert abs(leaks[0][1] / (4 << 20) - 1) <= 0.25, f"{sys.argv[3]}: leak {leaks[0][1]}"
PY
}

run_cmd profile --rate 16K -o "$WORK" -- ./sites 1
expect_rc 0 "profile ./sites"
check_sites "the fast engine"
pid=$(sed -n 's/^at the peak of pid \([0-9]*\):.*/\1/p' out)
[ -s "sites.$pid.peak.svg" ] || fail "no flame graph sites.$pid.peak.svg"
grep -q "<title>hold_big_blocks: " "sites.$pid.peak.svg" || fail "flame graph: no hold_big_blocks"

rm -f sites.*.heap
run_cmd profile --rate 16K --policy best -o "$WORK" -- ./sites 1
expect_rc 0 "profile --policy best ./sites"
check_sites "the lab"

# The lab's slack by site: the buddy system grants a 64 KiB request (with its 16-byte header) a
# block of 128 KiB, 64 bytes one of 128, 4 KiB one of 8 KiB, so the policy holds about 64, 6
# and 4 MiB beyond the three sites' live bytes at the peak.
rm -f sites.*.heap sites.*.slack
run_cmd profile --rate 16K --policy buddy -o "$WORK" -- ./sites 1
expect_rc 0 "profile --policy buddy ./sites"
check_sites "the lab's buddy system"
sed -n '/^at the peak of pid/,/^$/p' out >peak.txt
"$PYTHON" - peak.txt <<'PY' || fail "the buddy system's slack: $(cat out)"
import re, sys
units = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
text = open(sys.argv[1]).read()
assert re.search(r"^  the policy granted [\d.]+ [KMG]iB beyond the live bytes", text, re.M), text
rows = re.findall(r"^ +[\d.]+ \S+ +[\d.]+% +[\d,]+ +([\d.]+) (B|KiB|MiB|GiB)  (\S+)", text, re.M)
slack = {name: float(v) * units[u] / (1 << 20) for v, u, name in rows}
for name, mib, tol in [("hold_big_blocks", 64, 0.15), ("hold_small_blocks", 6, 0.25),
                       ("leak_pages", 4, 0.25)]:
    got = slack.get(name, 0)
    assert abs(got / mib - 1) <= tol, f"{name}: slack {got} MiB, not {mib}"
PY

run_cmd profile -o "$WORK" -- sh -c 'exit 3'
expect_rc 3 "the program's status"
echo "command/profile_run: ok"

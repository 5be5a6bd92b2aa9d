# A traced operator new whose new-handler runs: the failed attempt is recorded before the
# handler, the handler's own calls after it, a retry as a call of its own, and a handler that
# throws leaves the trace whole. The program's handler frees a reserve block (and returns) the
# first time, then throws std::bad_alloc; three operator new calls of 2^62 bytes are caught,
# then new(64) and delete. The trace, in program order, must hold for the reserve:
#   new(2^62) -> 0, free(reserve), new(2^62) -> 0, then the exception's allocation
# and no record may be left open: every later call (new(64), delete) is recorded once, and
# every free gets a live block in replay.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
need_env CXX

cat >"$WORK/handler.cpp" <<'CPPEOF'
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>

static void *reserve;
static void handler()
{
    if (reserve) { // what a real handler does: give memory back, then let new try again
        std::free(reserve);
        reserve = nullptr;
        return;
    }
    throw std::bad_alloc();
}

int main()
{
    reserve = std::malloc(100);
    std::printf("reserve %p\n", reserve);
    std::set_new_handler(handler);
    int caught = 0;
    for (int i = 0; i < 3; i++) {
        try {
            void *p = ::operator new(std::size_t(1) << 62);
            std::printf("unexpected %p\n", p);
        } catch (const std::bad_alloc &) {
            caught++;
        }
    }
    void *q = ::operator new(64);
    std::printf("small %p\n", q);
    ::operator delete(q);
    return caught == 3 ? 0 : 1;
}
CPPEOF
compile "$WORK/handler" "$WORK/handler.cpp"

traced "$WORK/t.fat" env -u FITALLOC_MODE "$WORK/handler" ||
    { cat "$WORK/out" "$WORK/err" >&2; fail "the program failed under FITALLOC_TRACE"; }
check_trace '
t = tr.read(sys.argv[1])
out = dict(line.split() for line in open(sys.argv[2]))
reserve, small = int(out["reserve"], 16), int(out["small"], 16)
recs = tr.in_seq_order(t.records)
huge = 1 << 62
i = next(k for k, r in enumerate(recs) if r.op == tr.NEW and r.size == huge)
first = recs[i:i + 4]
assert first[0].out == 0, first
assert first[1].op == tr.FREE and first[1].in_ == reserve, first
assert first[2].op == tr.NEW and first[2].size == huge and first[2].out == 0, first
assert first[3].op in tr.ALLOCATIONS and first[3].size > 0, first
news = [r for r in recs if r.op == tr.NEW and r.size == huge]
assert len(news) == 4 and all(r.out == 0 for r in news), news
smalls = [r for r in recs if r.op == tr.NEW and r.out == small]
assert len(smalls) == 1 and smalls[0].size == 64, smalls
deletes = [r for r in recs if r.op == tr.DELETE and r.in_ == small]
assert len(deletes) == 1, deletes
tr.check_live(t.records)
print(f"new-handler: {len(news)} failed news, the reserve freed between the first two")
' "$WORK/t.fat" "$WORK/out"
echo "trace/new_handler: ok"

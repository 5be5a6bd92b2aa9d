/* libFuzzer target: the validating trace reader of fitalloc-replay (tools/replay/trace_reader.h)
 * on arbitrary bytes. Whatever the input, the reader must either refuse it (-1, with a message)
 * or hand back records that keep the promises replays rely on: numbered 0..count-1 in program
 * order, strictly increasing in (time, thread), each with a known op, a thread below the
 * thread count, and only the pointer fields its op has. ASan and UBSan catch any read outside
 * the input. The seeds (tests/fuzz/corpus-trace) are real traces, so mutations reach the record
 * decoder and the ordering, not only the header checks.
 *
 *   mkdir -p /tmp/w && build-fuzz/tests/fuzz/fuzz_trace -runs=20000 -seed=1 /tmp/w \
 *       tests/fuzz/corpus-trace
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "trace_reader.h"

static void fail(size_t i, const char *what)
{
    fprintf(stderr, "fuzz_trace: record %zu: %s\n", i, what);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct trace t;
    if (trace_read_bytes(data, size, "input", &t) != 0)
        return 0;
    for (size_t i = 0; i < t.count; i++) {
        const struct fa_trace_record *r = &t.records[i];
        if (r->seq != i)
            fail(i, "not numbered in program order");
        if (r->op == 0 || r->op > FA_TRACE_OP_MAX)
            fail(i, "unknown op");
        if (r->thread >= t.threads)
            fail(i, "thread above the thread count");
        if ((!fa_trace_op_has_in(r->op) && r->in) || (!fa_trace_op_has_out(r->op) && r->out))
            fail(i, "a pointer field its op does not have");
        if (i > 0) {
            const struct fa_trace_record *p = &t.records[i - 1];
            if (p->time_ns > r->time_ns || (p->time_ns == r->time_ns && p->thread >= r->thread))
                fail(i, "not after the record before it in (time, thread)");
        }
    }
    trace_release(&t);
    return 0;
}

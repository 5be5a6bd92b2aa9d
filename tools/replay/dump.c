/* --dump (dump.h). */
#include "dump.h"

void dump_records(FILE *out, const struct trace *t)
{
    for (size_t i = 0; i < t->count; i++) {
        const struct fa_trace_record *r = &t->records[i];
        unsigned long long align = r->align_log2 ? 1ull << r->align_log2 : 0;
        fprintf(out, "%llu %llu %u %s %llu %llu 0x%llx 0x%llx\n", (unsigned long long)r->seq,
                (unsigned long long)r->time_ns, r->thread, trace_op_name(r->op),
                (unsigned long long)r->size, align, (unsigned long long)r->in,
                (unsigned long long)r->out);
    }
}

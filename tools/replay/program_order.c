/* The program order of a trace's records (program_order.h). */
#include "program_order.h"

#include <stdbool.h>
#include <stdlib.h>

#include "replay_mem.h"

static bool earlier(const struct fa_trace_record *a, const struct fa_trace_record *b)
{
    return a->time_ns != b->time_ns ? a->time_ns < b->time_ns : a->thread < b->thread;
}

/* Each thread's records in file order, one run per thread: runs[start[t] .. start[t + 1])
 * (start: threads + 1 zeroes; fill: threads entries). False if some thread's times do not
 * increase along its run. */
static bool thread_runs(const struct fa_trace_record *records, size_t n, uint32_t threads,
                        size_t *start, size_t *fill, uint32_t *runs)
{
    for (size_t k = 0; k < n; k++)
        start[records[k].thread + 1]++;
    for (uint32_t t = 0; t < threads; t++) {
        start[t + 1] += start[t];
        fill[t] = start[t];
    }
    for (size_t k = 0; k < n; k++)
        runs[fill[records[k].thread]++] = (uint32_t)k;
    for (uint32_t t = 0; t < threads; t++)
        for (size_t i = start[t] + 1; i < start[t + 1]; i++)
            if (records[runs[i - 1]].time_ns >= records[runs[i]].time_ns)
                return false;
    return true;
}

/* A binary heap of the runs' next records, earliest first. */
struct merge {
    const struct fa_trace_record *records;
    const uint32_t *runs;
    size_t *next, *end;
    uint32_t *heap; /* thread numbers */
    size_t size;
};

static bool before(const struct merge *m, uint32_t a, uint32_t b)
{
    return earlier(&m->records[m->runs[m->next[a]]], &m->records[m->runs[m->next[b]]]);
}

static void sift_down(struct merge *m, size_t i)
{
    for (;;) {
        size_t least = i, l = 2 * i + 1, r = l + 1;
        if (l < m->size && before(m, m->heap[l], m->heap[least]))
            least = l;
        if (r < m->size && before(m, m->heap[r], m->heap[least]))
            least = r;
        if (least == i)
            return;
        uint32_t swap = m->heap[i];
        m->heap[i] = m->heap[least];
        m->heap[least] = swap;
        i = least;
    }
}

static void merge_runs(struct merge *m, uint32_t threads, uint32_t *order)
{
    for (uint32_t t = 0; t < threads; t++)
        if (m->next[t] < m->end[t])
            m->heap[m->size++] = t;
    for (size_t i = m->size; i-- > 0;)
        sift_down(m, i);
    size_t out = 0;
    while (m->size) {
        uint32_t t = m->heap[0];
        order[out++] = m->runs[m->next[t]++];
        if (m->next[t] == m->end[t])
            m->heap[0] = m->heap[--m->size];
        sift_down(m, 0);
    }
}

struct keyed {
    uint64_t time_ns;
    uint32_t thread, index;
};

static int by_key(const void *a, const void *b)
{
    const struct keyed *x = a, *y = b;
    if (x->time_ns != y->time_ns)
        return x->time_ns < y->time_ns ? -1 : 1;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int sort_all(const struct fa_trace_record *records, size_t n, uint32_t *order,
                    uint32_t *first, uint32_t *second)
{
    struct keyed *keys = replay_map(n * sizeof *keys);
    if (!keys)
        return ORDER_NO_MEMORY;
    for (size_t k = 0; k < n; k++)
        keys[k] = (struct keyed){records[k].time_ns, records[k].thread, (uint32_t)k};
    qsort(keys, n, sizeof *keys, by_key);
    int rc = ORDER_OK;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && keys[i].time_ns == keys[i - 1].time_ns &&
            keys[i].thread == keys[i - 1].thread) {
            *first = keys[i - 1].index;
            *second = keys[i].index;
            rc = ORDER_DUPLICATE;
            break;
        }
        order[i] = keys[i].index;
    }
    replay_unmap(keys, n * sizeof *keys);
    return rc;
}

int program_order(const struct fa_trace_record *records, size_t n, uint32_t threads,
                  uint32_t *order, uint32_t *first, uint32_t *second)
{
    size_t bookkeeping = (2 * (size_t)threads + 1) * sizeof(size_t);
    size_t *start = replay_map(bookkeeping);
    uint32_t *runs = replay_map(n * sizeof *runs);
    uint32_t *heap = replay_map((size_t)threads * sizeof *heap);
    int rc = ORDER_NO_MEMORY;
    if (start && runs && heap) {
        size_t *next = start + threads + 1;
        if (thread_runs(records, n, threads, start, next, runs)) {
            for (uint32_t t = 0; t < threads; t++)
                next[t] = start[t];
            struct merge m = {records, runs, next, start + 1, heap, 0};
            merge_runs(&m, threads, order);
            rc = ORDER_OK;
        } else {
            rc = sort_all(records, n, order, first, second);
        }
    }
    replay_unmap(start, bookkeeping);
    replay_unmap(runs, n * sizeof *runs);
    replay_unmap(heap, (size_t)threads * sizeof *heap);
    return rc;
}

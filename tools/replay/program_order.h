/* The program order of a trace's records (docs/trace.md, "Order"): by time_ns, then thread.
 * Part of the reader (trace_reader.c), which numbers the records in this order.
 */
#ifndef FA_REPLAY_PROGRAM_ORDER_H
#define FA_REPLAY_PROGRAM_ORDER_H

#include <stddef.h>
#include <stdint.h>

#include "fitalloc-trace.h"

enum { ORDER_OK = 0, ORDER_DUPLICATE = -1, ORDER_NO_MEMORY = -2 };

/* order[i] = the file index of the record that comes i-th (n records, threads numbered below
 * `threads`). Each thread's records in increasing time in the file (what the recorder writes)
 * are merged in O(n log threads); any other file order is sorted. ORDER_DUPLICATE: records
 * *first and *second (file indexes, first < second) have the same thread and time. */
int program_order(const struct fa_trace_record *records, size_t n, uint32_t threads,
                  uint32_t *order, uint32_t *first, uint32_t *second);

#endif

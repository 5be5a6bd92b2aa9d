/* The order of FITALLOC_TRACE's calls: the time each call takes (docs/trace.md, "Order").
 *
 * One counter for the whole process would be the simplest order, but every call would then
 * take the same cache line from the other cores: with threads running on two cores that cost
 * more than all the rest of the recording. Instead, a call's time is a hybrid logical clock:
 *
 *   - its thread's clock: the last reading of CLOCK_MONOTONIC (taken every few calls, or at
 *     every call while they are slow), and at least one ns after the thread's previous call;
 *   - the stamp of the address region of each block it names: later than every call made on a
 *     block of that region before, by any thread (a compare-and-swap on a line that the
 *     threads using the region share, and hardly any other);
 *   - an allocation is also later than the points stamp (below).
 *
 * So a call is later than everything that happened before it to its blocks: a free comes
 * before the allocation that gets its block again, whichever thread does what, and a free of
 * a block handed over by another thread after its allocation. And no time is later than the
 * real time at which the call took it (each step adds one ns at most to a time read from the
 * clock or taken from a call that happened earlier), so the times stay close to the clock.
 *
 * A realloc that moves frees its old block before it returns, inside the call (free.c calls
 * _fa_trace_point), without naming it: it takes its time there from a fresh reading of the
 * clock, which no earlier call's time can exceed, and raises the points stamp, which every
 * allocation reads: the old block's next allocation comes after it.
 */
#include "trace/trace.h"
#include "platform/atomic.h"

uint64_t _fa_trace_stamps[FA_TRACE_STAMPS] __attribute__((aligned(64))) FA_BSS_APART;
struct fa_trace_line _fa_trace_points __attribute__((aligned(64)));
static uint64_t start_ns;

void _fa_trace_order_start(uint64_t start)
{
    start_ns = start;
}

/* The period doubles (up to FA_TRACE_CLOCK_PERIOD) while the calls since the last reading were
 * fast, and drops to 1 when they were slow. */
void _fa_trace_clock_read(struct fa_trace_clock *clock)
{
    uint64_t now = _fa_os_now_ns();
    now = now > start_ns ? now - start_ns : 0;
    if (now < clock->reading)
        now = clock->reading; /* a thread's readings never go back */
    if (now - clock->reading > (uint64_t)clock->period * FA_TRACE_SLOW_CALL_NS)
        clock->period = 1;
    else if (clock->period < FA_TRACE_CLOCK_PERIOD)
        clock->period *= 2;
    clock->reading = now;
    clock->until_reading = clock->period;
}

static void raise_to(uint64_t *stamp, uint64_t time)
{
    uint64_t seen = fa_atomic_load_relaxed(stamp);
    while (seen < time && !fa_atomic_cas_weak_relaxed(stamp, &seen, time))
        ;
}

void _fa_trace_stamp_raise(uint64_t time, uint64_t address)
{
    raise_to(fa_trace_stamp_of(address), time);
}

uint64_t _fa_trace_point_time(struct fa_trace_clock *clock, uint64_t previous)
{
    _fa_trace_clock_read(clock);
    uint64_t time = clock->reading > previous ? clock->reading : previous + 1;
    raise_to(&_fa_trace_points.value, time);
    return time;
}

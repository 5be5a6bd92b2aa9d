/* The mesher's CPU budget (FITALLOC_MESH_CPU, a percentage of the process's CPU).
 *
 * On a churning heap about half the merges are undone within seconds, when the page they saved
 * empties, and nothing the mesher sees tells those merges from the lasting ones (record 082):
 * so the mesher's cost is bounded instead of guessed. Each pass is charged the CPU its thread
 * spent in it; the budget earns the given share of the process's CPU time (the mesher's own
 * included, so the bound holds over the whole process), up to FA_MESH_BURST_NS kept in
 * advance. It starts full: a program that frees much at once has its pages merged at once.
 * Without credit there is no pass (the frees into detached pages wait, and an allocation that
 * finds no memory still has the mesher release the pages they emptied, _fa_mesh_reclaim); a
 * pass whose credit runs out stops merging at its next size class.
 *
 * The bound is there to leave the program its CPU while its heap churns. A heap at rest (no
 * page detached or released over the last window of FA_MESH_REST_WINDOW_NS or more) costs the
 * program nothing to mesh, and its passes are free: else a program that frees much and then
 * waits (a cache loaded, then serving rarely) would earn no credit and keep its memory (record
 * 098). Rest is judged by the heap, not by the program's CPU: on a loaded machine a busy
 * server kept waiting for a core uses little CPU too. */
#include "common/options.h"
#include "engine/mesh.h"
#include "platform/atomic.h"

#define FA_MESH_BURST_NS ((int64_t)200 * 1000 * 1000)
#define FA_MESH_REST_WINDOW_NS ((uint64_t)100 * 1000 * 1000)

static int64_t credit_ns = FA_MESH_BURST_NS;
static uint64_t process_seen_ns; /* the process's CPU when credit was last earned */
static uint64_t pass_start_ns;   /* the pass's thread CPU at its start; 0: no pass counted */
static uint64_t detached_seen, window_ns; /* the detached pages, the clock, a window's start */
static bool at_rest;                      /* no page detached or released over the last window */

static bool credit_left(void)
{
    uint64_t process = _fa_os_process_cpu_ns();
    if (process > process_seen_ns) {
        uint64_t earned = (process - process_seen_ns) / 100 * (uint64_t)fa_option(mesh_cpu);
        credit_ns += earned < (uint64_t)FA_MESH_BURST_NS ? (int64_t)earned : FA_MESH_BURST_NS;
        if (credit_ns > FA_MESH_BURST_NS)
            credit_ns = FA_MESH_BURST_NS;
        process_seen_ns = process;
    }
    int64_t spent = pass_start_ns ? (int64_t)(_fa_os_thread_cpu_ns() - pass_start_ns) : 0;
    return at_rest || credit_ns > spent;
}

bool _fa_mesh_budget_pass_start(void)
{
    if (!fa_option(mesh_cpu))
        return true;
    uint64_t wall = _fa_os_now_ns(), detached = fa_atomic_load_relaxed(&_fa_counters.mesh_detached);
    if (wall - window_ns >= FA_MESH_REST_WINDOW_NS) {
        at_rest = window_ns && detached == detached_seen;
        detached_seen = detached;
        window_ns = wall;
    } else if (detached != detached_seen) {
        at_rest = false;
    }
    if (!credit_left())
        return false;
    pass_start_ns = _fa_os_thread_cpu_ns();
    return true;
}

long _fa_mesh_budget_wait_ms(void)
{
    if (!fa_option(mesh_cpu))
        return 0;
    /* The soonest the credit can be back: were the process to use a whole core meanwhile. */
    int64_t debt = credit_ns < 0 ? -credit_ns : 0;
    return (long)(debt / 10000 / fa_option(mesh_cpu)) + 1;
}

bool _fa_mesh_budget_left(void)
{
    return !pass_start_ns || credit_left();
}

void _fa_mesh_budget_pass_end(void)
{
    if (!pass_start_ns)
        return;
    if (!at_rest)
        credit_ns -= (int64_t)(_fa_os_thread_cpu_ns() - pass_start_ns);
    pass_start_ns = 0;
}

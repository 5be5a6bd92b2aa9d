/* The calling thread's stack for the heap profiler (src/profile/), walked with the steps
 * eh_frame.c reads from the DWARF call-frame tables, so code built without frame pointers,
 * as most of Debian's is, is walked too. Each return address's step is looked up once and
 * kept in one table for every thread: a sampled stack then costs a table lookup and two loads
 * a frame, and no unwinder library is loaded, nor a cache kept per thread
 * (docs/decisions/086-profile-own-unwinder.md). A frame without such a step (a signal
 * frame, a stack realigned through a DWARF expression, code without tables) ends the stack. */
#include "platform/atomic.h"
#include "platform/compiler.h"
#include "platform/os.h"

#if defined(__x86_64__)

const char *_fa_os_unwinder_load(void)
{
    return "the call-frame tables"; /* nothing to load */
}

/* Return addresses whose steps are kept: a table of FA_STEPS_FIRST slots (one page), mapped at
 * the first walk and replaced by one twice as large when half full, up to FA_STEPS_FIRST <<
 * (FA_STEPS_LEVELS - 1); past that, or if a mapping fails, a step is read anew each time. A
 * small program's walks pass a few dozen return addresses: a table of the largest size from
 * the start, spread by the hash, kept 32 KiB resident (docs/decisions/096-profile-cost-cut.md).
 * A replaced table stays mapped for the walks still reading it; an entry added to it while it
 * is copied is lost, and read again when next wanted. */
#define FA_STEPS_FIRST 256
#define FA_STEPS_LEVELS 4
#define FA_STEPS_PROBE 16
#define FA_STEP_CLAIMED ((uintptr_t)1)
#define FA_STEPS_NONE 0xff

/* 16 bytes, written once: `step` first, then `ip` with release, so that a reader that sees
 * the ip (acquire) sees its step. A slot being written holds FA_STEP_CLAIMED. */
struct step_slot {
    uintptr_t ip;
    struct fa_os_frame_step step;
};
static struct step_slot *step_tables[FA_STEPS_LEVELS];
static size_t step_used[FA_STEPS_LEVELS];
static uint8_t step_level = FA_STEPS_NONE; /* the table in use (release, after its pointer) */
static uint8_t step_growing;

/* The table after `level` (FA_STEPS_NONE: the first), its entries copied, unless another
 * thread makes it. */
static void steps_grow(uint8_t level)
{
    uint8_t idle = 0;
    if (!fa_atomic_cas_relaxed(&step_growing, &idle, 1))
        return;
    uint8_t next = level == FA_STEPS_NONE ? 0 : (uint8_t)(level + 1);
    size_t slots = (size_t)FA_STEPS_FIRST << next;
    struct step_slot *t = fa_atomic_load_acquire(&step_level) == level && next < FA_STEPS_LEVELS
                              ? _fa_os_map_aligned(slots * sizeof *t, 4096)
                              : NULL;
    if (t) {
        size_t used = 0;
        for (size_t i = 0; level != FA_STEPS_NONE && i < (size_t)FA_STEPS_FIRST << level; i++) {
            struct step_slot *from = &step_tables[level][i];
            uintptr_t ip = fa_atomic_load_acquire(&from->ip);
            if (ip <= FA_STEP_CLAIMED)
                continue;
            size_t j = (size_t)((ip * 0x9e3779b97f4a7c15ull) >> 40) & (slots - 1);
            while (t[j].ip)
                j = (j + 1) & (slots - 1);
            t[j].step = from->step;
            t[j].ip = ip;
            used++;
        }
        step_used[next] = used;
        step_tables[next] = t;
        fa_atomic_store_release(&step_level, next);
    }
    fa_atomic_store_release(&step_growing, 0);
}

/* The table a walk reads, taken once for the whole walk (FA_STEPS_NONE: none yet). */
static uint8_t steps_in_use(void)
{
    uint8_t level = fa_atomic_load_acquire(&step_level);
    if (level == FA_STEPS_NONE) {
        steps_grow(level);
        level = fa_atomic_load_acquire(&step_level);
    }
    return level;
}

/* ip's step, read and kept in the empty slot `slot` of table `level` unless another thread
 * takes the slot first. Apart, so that a walk's lookups stay short. */
static __attribute__((noinline)) struct fa_os_frame_step
step_kept(uint8_t level, struct step_slot *slot, uintptr_t ip)
{
    struct fa_os_frame_step step = _fa_os_frame_step(ip);
    uintptr_t empty = 0;
    if (fa_atomic_cas_relaxed(&slot->ip, &empty, FA_STEP_CLAIMED)) {
        slot->step = step;
        fa_atomic_store_release(&slot->ip, ip);
        if (fa_atomic_add_relaxed(&step_used[level], 1) * 2 > (size_t)FA_STEPS_FIRST << level)
            steps_grow(level);
    }
    return step;
}

static struct fa_os_frame_step step_of(uint8_t level, uintptr_t ip)
{
    if (level == FA_STEPS_NONE)
        return _fa_os_frame_step(ip);
    struct step_slot *steps = step_tables[level];
    size_t slots = (size_t)FA_STEPS_FIRST << level;
    size_t i = (size_t)((ip * 0x9e3779b97f4a7c15ull) >> 40) & (slots - 1);
    for (unsigned probe = 0; probe < FA_STEPS_PROBE; probe++, i = (i + 1) & (slots - 1)) {
        uintptr_t key = fa_atomic_load_acquire(&steps[i].ip);
        if (key == ip)
            return steps[i].step;
        if (key == 0)
            return step_kept(level, &steps[i], ip);
    }
    steps_grow(level); /* FA_STEPS_PROBE slots taken in a row: the table is too full */
    return _fa_os_frame_step(ip);
}

/* The most a frame may span, its locals and arguments: a larger step is taken for a broken
 * chain and ends the stack there. */
#define FA_FRAME_MAX ((uintptr_t)1 << 20)

/* The thread's last walk, kept when it took at most FA_MEMO_STEPS steps: where it started, and
 * each word it read with the value it found. A walk that starts from the same ip and sp and
 * finds the same values at those places again would read the same words and take the same
 * steps, so its stack is the kept one: checking costs a load or two a frame, where a walk
 * costs a lookup in the table of steps (a loop calling malloc from one place samples from one
 * stack pointer, again and again). rbp counts only where a step's CFA came from it: code
 * without frame pointers saves and restores rbp holding any value, which differs from call
 * to call. */
#define FA_MEMO_STEPS 16
#define FA_MEMO_NO_RBP INT32_MIN
static __thread struct walk_memo {
    uintptr_t sp, rbp;
    uint32_t steps, count, max;    /* count 0: nothing kept */
    bool truncated, rbp_used;      /* rbp_used: a step's CFA came from the start's rbp */
    uint32_t cfa[FA_MEMO_STEPS];   /* each step's CFA, from sp */
    int32_t rbp_at[FA_MEMO_STEPS]; /* where it read an rbp a CFA came from (or FA_MEMO_NO_RBP) */
    uintptr_t rbp_read[FA_MEMO_STEPS];
    uintptr_t ip[FA_MEMO_STEPS + 1]; /* the start's ip, then the one each step read */
} memo __attribute__((tls_model("initial-exec")));

/* Whether the thread's last walk, started from (ip, rbp, sp) with `max`, gives this one. Each
 * word is read only if the ones before it held what they held then: the walk itself would
 * read it. */
__attribute__((no_sanitize_address, no_sanitize_thread)) static bool
memo_holds(const struct walk_memo *m, uintptr_t ip, uintptr_t rbp, uintptr_t sp, size_t max)
{
    if (!m->count || m->ip[0] != ip || m->sp != sp || (m->rbp_used && m->rbp != rbp) ||
        m->max != max)
        return false;
    for (uint32_t i = 0; i < m->steps; i++) {
        uintptr_t cfa = sp + m->cfa[i];
        if (m->rbp_at[i] != FA_MEMO_NO_RBP &&
            *(const uintptr_t *)(cfa + (uintptr_t)(intptr_t)m->rbp_at[i]) != m->rbp_read[i])
            return false;
        if (*(const uintptr_t *)(cfa - 8) != m->ip[i + 1])
            return false;
    }
    return true;
}

/* The walk reads the return address and saved rbp of other functions' frames, which the
 * sanitizers would take for their locals. */
__attribute__((noinline, no_sanitize_address, no_sanitize_thread)) size_t
_fa_os_stack(uintptr_t *frames, size_t max, bool *truncated)
{
    /* This function's own frame has a frame pointer (asking for it makes one): its caller's
     * return address and rbp are saved there, its caller's stack pointer just above. */
    uintptr_t *own = __builtin_frame_address(0);
    uintptr_t ip = own[1], rbp = own[0], sp = (uintptr_t)(own + 2);
    struct walk_memo *m = &memo;
    if (memo_holds(m, ip, rbp, sp, max)) {
        for (uint32_t i = 0; i < m->count; i++)
            frames[i] = m->ip[i];
        *truncated = m->truncated;
        return m->count;
    }
    m->count = 0;
    m->sp = sp;
    m->rbp = rbp;
    m->ip[0] = ip;
    m->rbp_used = false;
    int32_t rbp_step = -1, rbp_offset = 0; /* where rbp was read: the start (-1), or a step */
    uint32_t steps = 0;
    uintptr_t start = sp;
    size_t count = 0;
    uint8_t table = steps_in_use();
    *truncated = false;
    while (ip) {
        if (count == max) {
            *truncated = true;
            break;
        }
        frames[count++] = ip;
        struct fa_os_frame_step step = step_of(table, ip);
        if (step.kind != FA_FRAME_STEP)
            break;
        uintptr_t cfa = (step.cfa_on_rbp ? rbp : sp) + (uintptr_t)(intptr_t)step.cfa_offset;
        if (step.cfa_on_rbp && rbp_step < 0)
            m->rbp_used = true;
        else if (step.cfa_on_rbp && rbp_step < FA_MEMO_STEPS)
            m->rbp_at[rbp_step] = rbp_offset;
        /* The caller's frame lies above this one, and not far: anything else is a broken
         * chain (tables that do not describe the code), which must end the walk before it
         * reads memory that may not be mapped. */
        if (cfa < sp + 8 || cfa - sp > FA_FRAME_MAX)
            break;
        if (step.rbp_saved) {
            rbp = *(const uintptr_t *)(cfa + (uintptr_t)(intptr_t)step.rbp_offset);
            rbp_step = (int32_t)steps;
            rbp_offset = step.rbp_offset;
        }
        ip = *(const uintptr_t *)(cfa - 8);
        sp = cfa;
        if (steps < FA_MEMO_STEPS) {
            m->cfa[steps] = (uint32_t)(cfa - start);
            m->rbp_at[steps] = FA_MEMO_NO_RBP;
            m->rbp_read[steps] = rbp;
            m->ip[steps + 1] = ip;
        }
        steps++;
    }
    if (steps <= FA_MEMO_STEPS) {
        m->steps = steps;
        m->max = (uint32_t)max;
        m->truncated = *truncated;
        m->count = (uint32_t)count;
    }
    return count;
}

#else

/* Elsewhere, libgcc's unwinder, loaded when profiling starts (dlopen, which allocates). */
#include <dlfcn.h>
#include <unwind.h>

static _Unwind_Reason_Code (*backtrace_fn)(_Unwind_Trace_Fn, void *);
static _Unwind_Ptr (*get_ip_fn)(struct _Unwind_Context *);

const char *_fa_os_unwinder_load(void)
{
    void *lib = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL);
    backtrace_fn =
        lib ? (_Unwind_Reason_Code(*)(_Unwind_Trace_Fn, void *))dlsym(lib, "_Unwind_Backtrace")
            : NULL;
    get_ip_fn = lib ? (_Unwind_Ptr(*)(struct _Unwind_Context *))dlsym(lib, "_Unwind_GetIP") : NULL;
    return backtrace_fn && get_ip_fn ? "libgcc_s.so.1" : NULL;
}

struct walk {
    uintptr_t *frames;
    size_t count, max;
    bool truncated;
};

static _Unwind_Reason_Code one_frame(struct _Unwind_Context *context, void *arg)
{
    struct walk *w = arg;
    uintptr_t ip = get_ip_fn(context);
    if (!ip)
        return _URC_END_OF_STACK;
    if (w->count == w->max) {
        w->truncated = true;
        return _URC_END_OF_STACK;
    }
    w->frames[w->count++] = ip;
    return _URC_NO_REASON;
}

size_t _fa_os_stack(uintptr_t *frames, size_t max, bool *truncated)
{
    struct walk w = {frames, 0, max, false};
    if (backtrace_fn)
        backtrace_fn(one_frame, &w);
    *truncated = w.truncated;
    return w.count;
}

#endif

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

/* Return addresses whose steps are kept; past that, a step is read anew each time. */
#define FA_STEPS 2048
#define FA_STEPS_PROBE 16
#define FA_STEP_CLAIMED ((uintptr_t)1)

/* 16 bytes, written once: `step` first, then `ip` with release, so that a reader that sees
 * the ip (acquire) sees its step. A slot being written holds FA_STEP_CLAIMED. */
struct step_slot {
    uintptr_t ip;
    struct fa_os_frame_step step;
};
static struct step_slot steps[FA_STEPS] FA_BSS_APART;

static struct fa_os_frame_step step_of(uintptr_t ip)
{
    size_t i = (size_t)((ip * 0x9e3779b97f4a7c15ull) >> 40) % FA_STEPS;
    for (unsigned probe = 0; probe < FA_STEPS_PROBE; probe++, i = (i + 1) % FA_STEPS) {
        uintptr_t key = fa_atomic_load_acquire(&steps[i].ip);
        if (key == ip)
            return steps[i].step;
        if (key == 0) {
            struct fa_os_frame_step step = _fa_os_frame_step(ip);
            uintptr_t empty = 0;
            if (fa_atomic_cas_relaxed(&steps[i].ip, &empty, FA_STEP_CLAIMED)) {
                steps[i].step = step;
                fa_atomic_store_release(&steps[i].ip, ip);
            }
            return step;
        }
    }
    return _fa_os_frame_step(ip);
}

/* The most a frame may span, its locals and arguments: a larger step is taken for a broken
 * chain and ends the stack there. */
#define FA_FRAME_MAX ((uintptr_t)1 << 20)

/* The walk reads the return address and saved rbp of other functions' frames, which the
 * sanitizers would take for their locals. */
__attribute__((noinline, no_sanitize_address, no_sanitize_thread)) size_t
_fa_os_stack(uintptr_t *frames, size_t max, bool *truncated)
{
    /* This function's own frame has a frame pointer (asking for it makes one): its caller's
     * return address and rbp are saved there, its caller's stack pointer just above. */
    uintptr_t *own = __builtin_frame_address(0);
    uintptr_t ip = own[1], rbp = own[0], sp = (uintptr_t)(own + 2);
    size_t count = 0;
    *truncated = false;
    while (ip) {
        if (count == max) {
            *truncated = true;
            break;
        }
        frames[count++] = ip;
        struct fa_os_frame_step step = step_of(ip);
        if (step.kind != FA_FRAME_STEP)
            break;
        uintptr_t cfa = (step.cfa_on_rbp ? rbp : sp) + (uintptr_t)(intptr_t)step.cfa_offset;
        /* The caller's frame lies above this one, and not far: anything else is a broken
         * chain (tables that do not describe the code), which must end the walk before it
         * reads memory that may not be mapped. */
        if (cfa < sp + 8 || cfa - sp > FA_FRAME_MAX)
            break;
        if (step.rbp_saved)
            rbp = *(const uintptr_t *)(cfa + (uintptr_t)(intptr_t)step.rbp_offset);
        ip = *(const uintptr_t *)(cfa - 8);
        sp = cfa;
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

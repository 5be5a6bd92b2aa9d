/* The calling thread's stack for the heap profiler (src/profile/), with an unwinder loaded when
 * profiling starts rather than linked: libfitalloc.so depends on neither, so that no program
 * loads one at start for a profiler it does not use (CMakeLists.txt). Both read the DWARF
 * call-frame tables every object carries (.eh_frame), so they walk code built without frame
 * pointers, as most of Debian's is. libunwind's unw_backtrace first, when installed: it caches
 * what it learns of each return address, and took 1,600 instructions a 16-frame stack where
 * libgcc's _Unwind_Backtrace, which looks each frame's tables up again, took 26,700
 * (docs/decisions/062-heap-profiler.md); libgcc's, which every C++ program has, otherwise. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <unwind.h>

#include "platform/atomic.h"
#include "platform/os.h"

static int (*unw_backtrace_fn)(void **, int);
static _Unwind_Reason_Code (*backtrace_fn)(_Unwind_Trace_Fn, void *);
static _Unwind_Ptr (*get_ip_fn)(struct _Unwind_Context *);
static const char *loaded;

const char *_fa_os_unwinder_load(void)
{
    if (loaded)
        return loaded;
    void *lib = NULL, *walk = NULL;
#ifndef __SANITIZE_THREAD__
    /* Not under ThreadSanitizer: libunwind's thread-exit destructor locks a mutex after the
     * sanitizer has let go of the thread, and faults in its interceptor. */
    lib = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    walk = lib ? dlsym(lib, "unw_backtrace") : NULL;
#endif
    if (walk) {
        unw_backtrace_fn = (int (*)(void **, int))walk;
        return loaded = "libunwind.so.8";
    }
    lib = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL);
    walk = lib ? dlsym(lib, "_Unwind_Backtrace") : NULL;
    get_ip_fn = lib ? (_Unwind_Ptr(*)(struct _Unwind_Context *))dlsym(lib, "_Unwind_GetIP") : NULL;
    if (!walk || !get_ip_fn)
        return NULL;
    backtrace_fn = (_Unwind_Reason_Code(*)(_Unwind_Trace_Fn, void *))walk;
    return loaded = "libgcc_s.so.1";
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
    *truncated = false;
    if (unw_backtrace_fn) {
        /* One more than asked for tells a deeper stack. */
        void *ips[max + 1];
        int n = unw_backtrace_fn(ips, (int)(max + 1));
        size_t count = n > 0 ? (size_t)n : 0;
        *truncated = count > max;
        if (count > max)
            count = max;
        for (size_t i = 0; i < count; i++)
            frames[i] = (uintptr_t)ips[i];
        return count;
    }
    if (!backtrace_fn)
        return 0;
    struct walk w = {frames, 0, max, false};
    backtrace_fn(one_frame, &w);
    *truncated = w.truncated;
    return w.count;
}

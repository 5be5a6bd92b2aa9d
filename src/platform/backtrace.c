/* The calling thread's stack, and what the dynamic linker knows of a code address: for secure
 * mode's reports (engine/secure/report_stack.c). Built into libfitalloc-secure.so only
 * (CMakeLists.txt), with libgcc's unwinder linked in statically, so that a C program does not
 * load libgcc_s for it. Neither function allocates: both run in a report, on a heap found
 * corrupt, and in the SIGSEGV handler of a guard page's fault. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <unwind.h>

#include "platform/os.h"

struct walk {
    uintptr_t *frames;
    size_t count, max;
};

static _Unwind_Reason_Code one_frame(struct _Unwind_Context *context, void *arg)
{
    struct walk *w = arg;
    int exact = 0; /* a signal frame's address is the faulting instruction's own */
    uintptr_t ip = _Unwind_GetIPInfo(context, &exact);
    if (!ip || w->count == w->max)
        return _URC_END_OF_STACK;
    /* A return address is the instruction after the call: one byte back is in the call, so
     * the symbol looked up is the caller's even when the call ends its function. */
    w->frames[w->count++] = exact ? ip : ip - 1;
    return _URC_NO_REASON;
}

size_t _fa_os_backtrace(uintptr_t *frames, size_t max)
{
    struct walk w = {frames, 0, max};
    _Unwind_Backtrace(one_frame, &w);
    return w.count;
}

bool _fa_os_symbol(uintptr_t address, struct fa_os_symbol *symbol)
{
    Dl_info info;
    if (!dladdr((const void *)address, &info))
        return false;
    symbol->name = info.dli_sname;
    symbol->offset = info.dli_sname ? address - (uintptr_t)info.dli_saddr : 0;
    symbol->object = info.dli_fname;
    symbol->object_offset = address - (uintptr_t)info.dli_fbase;
    return true;
}

/* Secure mode's reports say where: after a report's line, the stack of the call that found the
 * fault, one line a frame, as AddressSanitizer prints it:
 *
 *   fitalloc: free(): double free of 0x7f3a5c201040 (32-byte block)
 *       #0 0x55d0c2a011c8 in release_twice+0x10 (./program+0x11c8)
 *       #1 0x55d0c2a01204 in main+0x15 (./program+0x1204)
 *
 * fitalloc's own frames (the entry point, the checks, the report) are left out: the line
 * above names the function the program called, the first frame is the code that called it. A
 * function is named when the dynamic linker knows it (exported: a program's own with
 * -rdynamic); else its object and the offset in it, which addr2line turns into a line. Nothing
 * here allocates: the heap has just been found corrupt, or a guard page's fault is being
 * handled. */
#include "common/message.h"
#include "engine/secure/secure.h"
#include "platform/os.h"

#define FA_STACK_FRAMES 32

static uintptr_t own_start, own_end;

static bool own(uintptr_t address)
{
    return address - own_start < own_end - own_start;
}

static void print_stack(void)
{
    uintptr_t frames[FA_STACK_FRAMES];
    size_t count = _fa_os_backtrace(frames, FA_STACK_FRAMES);
    size_t first = 0;
    while (first < count && own(frames[first]))
        first++;
    for (size_t i = first; i < count; i++) {
        struct fa_os_symbol s;
        if (!_fa_os_symbol(frames[i], &s)) {
            _fa_message(2, "    #%zu %p\n", i - first, (void *)frames[i]);
            continue;
        }
        const char *object = s.object && *s.object ? s.object : "<program>";
        if (s.name)
            _fa_message(2, "    #%zu %p in %s+0x%zx (%s+0x%zx)\n", i - first, (void *)frames[i],
                        s.name, (size_t)s.offset, object, (size_t)s.object_offset);
        else
            _fa_message(2, "    #%zu %p (%s+0x%zx)\n", i - first, (void *)frames[i], object,
                        (size_t)s.object_offset);
    }
}

void _fa_secure_report_init(void)
{
    if (_fa_os_code_range((const void *)print_stack, &own_start, &own_end))
        _fa_report_stack = print_stack;
}

/* Messages on a file descriptor without malloc or stdio (message.c), and the reports of misuse
 * that every allocator layer shares: each prints one line naming the caller and the pointer and
 * aborts. */
#ifndef FA_MESSAGE_H
#define FA_MESSAGE_H

#include <stdarg.h>
#include <stddef.h>

void _fa_vmessage(int fd, const char *fmt, va_list ap);
void _fa_message(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The message on stderr, then abort (SIGABRT); the trace keeps the calls up to this one. */
__attribute__((noreturn, cold)) void _fa_fatal(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* Printed after a fatal message's line if set: the stack of the call (secure mode's,
 * engine/secure/report_stack.c); once, so that a fault while printing it ends the program. */
extern void (*_fa_report_stack)(void);

#define FA_REPORT __attribute__((noreturn, cold))
FA_REPORT void _fa_invalid_pointer(const char *caller, const void *p);
FA_REPORT void _fa_double_free(const char *caller, const void *p, size_t size);

#endif

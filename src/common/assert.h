/* FA_ASSERT(condition): a precondition or invariant the code relies on, checked in the debug and
 * sanitizer builds (FA_DEBUG) and compiled out of release builds, where it costs nothing (the
 * condition is not evaluated). A failed check aborts with the condition, file and line: it is a
 * bug in fitalloc, not in the program (the program's misuse gets the reports of message.h,
 * in every build). */
#ifndef FA_ASSERT_H
#define FA_ASSERT_H

#include "common/message.h"

#ifdef FA_DEBUG
#define FA_ASSERT(condition)                                                                       \
    ((condition) ? (void)0                                                                         \
                 : _fa_fatal("fitalloc: internal error: %s is false (%s:%d)\n", #condition,        \
                             __FILE__, __LINE__))
#else
/* Not evaluated; sizeof keeps the variables it names in use, so no build warns about them. */
#define FA_ASSERT(condition) ((void)sizeof((condition) ? 1 : 0))
#endif

#endif

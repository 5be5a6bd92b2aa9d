/* FA_KEEP_ERRNO: errno is put back as it was when the enclosing scope ends, however it ends.
 * The system calls behind os.h report failure by their return value only (os.h): a program
 * that reads errno after a malloc that succeeded must find its own value there. */
#ifndef FA_KEEP_ERRNO_H
#define FA_KEEP_ERRNO_H

#include <errno.h>

static inline void fa_errno_restore(const int *saved)
{
    errno = *saved;
}

/* unused: clang does not count the cleanup as a use. */
#define FA_KEEP_ERRNO int fa_errno_saved_ __attribute__((cleanup(fa_errno_restore), unused)) = errno

#endif

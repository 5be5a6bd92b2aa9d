/* The default library, libfitalloc.so, has no secure mode: that is libfitalloc-secure.so, built
 * from the same engine with src/engine/secure/ (FA_SECURE_BUILD). Asked for here, secure mode
 * is not there to run, and a program that believes itself checked must hear that it is not:
 * one line on stderr, whatever FITALLOC_VERBOSE says; the program then runs in the default
 * mode (docs/decisions/020-secure-library.md says why a warning and not a refusal). */
#include "common/options.h"
#include "engine/engine.h"

const struct fa_mode_ops *_fa_secure_init(void)
{
    /* The lab's own warning says that secure mode does not apply there. */
    if (fa_option(secure) && fa_option(mode) != FA_MODE_LAB)
        _fa_message(2, "fitalloc: FITALLOC_SECURE=1 needs libfitalloc-secure.so "
                       "(LD_PRELOAD=libfitalloc-secure.so, or fitalloc run --secure); "
                       "libfitalloc.so runs without secure mode's checks\n");
    return NULL;
}

void _fa_secure_check_quarantine(void) {}

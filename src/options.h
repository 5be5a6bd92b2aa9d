/* Options: FITALLOC_* environment variables, declared once in this table and read from
 * `environ` without allocating. X(id, NAME, kind, default, help). */
#ifndef FA_OPTIONS_H
#define FA_OPTIONS_H

#define FA_OPTION_TABLE(X)                                                                         \
    X(verbose, "VERBOSE", FA_OPT_BOOL, 0, "print what fitalloc does (start, warnings)")            \
    X(stats, "STATS", FA_OPT_BOOL, 0, "print statistics to stderr at exit")                        \
    X(purge_delay, "PURGE_DELAY", FA_OPT_MS, 100,                                                  \
      "milliseconds before free memory goes back to the OS (0: at once)")                          \
    X(purge_thread, "PURGE_THREAD", FA_OPT_BOOL, 1,                                                \
      "purge from a background thread, so memory returns even when the program is idle")           \
    X(segment_cache, "SEGMENT_CACHE", FA_OPT_COUNT, 8, "empty 4 MiB segments kept for reuse")      \
    X(large_cache, "LARGE_CACHE", FA_OPT_SIZE, 64 << 20,                                           \
      "bytes of freed large blocks kept mapped for reuse")

enum fa_option_kind {
    FA_OPT_BOOL,  /* 1/0, yes/no, true/false, on/off */
    FA_OPT_COUNT, /* a non-negative integer */
    FA_OPT_SIZE,  /* bytes, with an optional K, M or G suffix (powers of 1024) */
    FA_OPT_MS,    /* milliseconds, or with an "s" suffix seconds */
};

enum fa_option_id {
#define FA_OPTION_ENUM(id, name, kind, def, help) FA_OPTION_##id,
    FA_OPTION_TABLE(FA_OPTION_ENUM)
#undef FA_OPTION_ENUM
        FA_OPTION_COUNT
};

/* Current values, indexed by enum fa_option_id; defaults until _fa_options_init runs. */
extern long long _fa_option_values[FA_OPTION_COUNT];

#define fa_option(id) (_fa_option_values[FA_OPTION_##id])

/* Read FITALLOC_* from environ; warns about bad values and unknown names. Returns false when
 * environ is not set up yet (very early in process start): call again later. */
_Bool _fa_options_init(void);

#endif

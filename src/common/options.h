/* Options: FITALLOC_* environment variables, declared once in this table and read from
 * `environ` without allocating. X(id, NAME, kind, default, choices, help); for a choice the
 * value is the index of the name in `choices` ("a|b|c"), for a string a pointer into environ. */
#ifndef FA_OPTIONS_H
#define FA_OPTIONS_H

#include <stdint.h>

#define FA_OPTION_TABLE(X)                                                                         \
    X(verbose, "VERBOSE", FA_OPT_BOOL, 0, 0, "print what fitalloc does (start, warnings)")         \
    X(stats, "STATS", FA_OPT_CHOICE, 0, "0|1|json",                                                \
      "print statistics to stderr at exit (json: as one JSON object)")                             \
    X(purge_delay, "PURGE_DELAY", FA_OPT_MS, 100, 0,                                               \
      "milliseconds before free memory goes back to the OS (0: at once)")                          \
    X(purge_thread, "PURGE_THREAD", FA_OPT_BOOL, 1, 0,                                             \
      "purge from a background thread, so memory returns even when the program is idle")           \
    X(segment_cache, "SEGMENT_CACHE", FA_OPT_COUNT, 8, 0, "empty 4 MiB segments kept for reuse")   \
    X(parked_heaps, "PARKED_HEAPS", FA_OPT_COUNT, 16, 0,                                           \
      "heaps of exited threads kept whole for the next threads (0: give their pages away)")        \
    X(page_pool, "PAGE_POOL", FA_OPT_BOOL, 1, 0,                                                   \
      "full pages their own and other threads free into go to a pool any thread takes from")       \
    X(large_cache, "LARGE_CACHE", FA_OPT_SIZE, 64 << 20, 0,                                        \
      "bytes of freed large blocks kept mapped for reuse")                                         \
    X(huge_pages, "HUGE_PAGES", FA_OPT_BOOL, 0, 0,                                                 \
      "back segments and large blocks with 2 MiB transparent huge pages (madvise)")                \
    X(calloc_populate, "CALLOC_POPULATE", FA_OPT_BOOL, 1, 0,                                       \
      "large calloc: fault fresh pages in at once while the program uses such blocks whole")       \
    X(mesh, "MESH", FA_OPT_BOOL, 0, 0,                                                             \
      "give back the memory of mostly empty pages: meshing (docs/design.md)")                      \
    X(mesh_period, "MESH_PERIOD", FA_OPT_MS, 400, 0, "milliseconds between two meshing passes")    \
    X(mesh_cpu, "MESH_CPU", FA_OPT_COUNT, 0, 0,                                                    \
      "meshing: most of the process's CPU the mesher takes, in percent (0: no bound)")             \
    X(mesh_merge, "MESH_MERGE", FA_OPT_BOOL, 1, 0,                                                 \
      "meshing: merge frames (0: only give back detached pages' empty frames)")                    \
    X(mode, "MODE", FA_OPT_CHOICE, 0, "fast|lab", "engine: the fast allocator or the policy lab")  \
    X(trace, "TRACE", FA_OPT_STRING, 0, 0,                                                         \
      "record every allocation call to this file (docs/trace.md)")                                 \
    X(profile, "PROFILE", FA_OPT_STRING, 0, 0,                                                     \
      "heap profile: write PREFIX.<pid>.peak.heap and .exit.heap (docs/profile.md)")               \
    X(profile_rate, "PROFILE_RATE", FA_OPT_SIZE, 512 << 10, 0,                                     \
      "heap profile: mean bytes allocated between two samples")                                    \
    X(profile_signal, "PROFILE_SIGNAL", FA_OPT_STRING, 0, 0,                                       \
      "heap profile: this signal (SIGUSR2, ...) writes PREFIX.<pid>.<n>.heap")                     \
    X(only, "ONLY", FA_OPT_STRING, 0, 0,                                                           \
      "statistics, trace and reports only in processes started from a file of this name")          \
    X(secure, "SECURE", FA_OPT_BOOL, 0, 0,                                                         \
      "secure mode: canaries, quarantine, fill checks, random placement, guard pages")             \
    X(secure_zero, "SECURE_ZERO", FA_OPT_BOOL, 0, 0,                                               \
      "secure mode: zero freed blocks whole and check them whole")                                 \
    X(secure_protect, "SECURE_PROTECT", FA_OPT_BOOL, 1, 0,                                         \
      "secure mode: big blocks wait in the quarantine inaccessible past their first page")         \
    X(quarantine, "QUARANTINE", FA_OPT_SIZE, 256 << 10, 0,                                         \
      "secure mode: bytes of freed blocks each thread holds back from reuse")                      \
    X(policy, "POLICY", FA_OPT_CHOICE, 2, "first|next|best|worst|segregated|tlsf|buddy|slab",      \
      "lab: placement policy")                                                                     \
    X(lab_index, "LAB_INDEX", FA_OPT_CHOICE, 0, "tree|list",                                       \
      "lab: how free blocks are found (O(log n) trees or the textbook list)")                      \
    X(lab_coalesce, "LAB_COALESCE", FA_OPT_BOOL, 1, 0, "lab: merge free neighbours on free")       \
    X(lab_arena, "LAB_ARENA", FA_OPT_SIZE, 0, 0,                                                   \
      "lab: fixed heap size obtained once (0: grow as needed)")                                    \
    X(lab_direct, "LAB_DIRECT", FA_OPT_SIZE, 0, 0,                                                 \
      "lab: requests from this size up go straight to the OS (0: never)")                          \
    X(lab_exact_max, "LAB_EXACT_MAX", FA_OPT_SIZE, 128, 0,                                         \
      "lab, segregated fit: exact-size lists in 16-byte steps up to this size")                    \
    X(lab_hist, "LAB_HIST", FA_OPT_STRING, 0, 0,                                                   \
      "lab: write the free-block size histogram to this file at exit")                             \
    X(lab_check, "LAB_CHECK", FA_OPT_BOOL, 0, 0,                                                   \
      "lab: check every heap's invariants at exit (a broken heap stops the program)")              \
    X(lock, "LOCK", FA_OPT_CHOICE, 0, "global|thread|arenas", "lab: thread-safety strategy")       \
    X(arenas, "ARENAS", FA_OPT_COUNT, 0, 0, "lab, arenas: how many (0: 8 per core)")

enum fa_option_kind {
    FA_OPT_BOOL,   /* 1/0, yes/no, true/false, on/off */
    FA_OPT_COUNT,  /* a non-negative integer, at most FA_OPTION_COUNT_MAX */
    FA_OPT_SIZE,   /* bytes, with an optional K, M or G suffix (powers of 1024), at most
                      FA_OPTION_SIZE_MAX */
    FA_OPT_MS,     /* milliseconds, or with an "s" suffix seconds, at most FA_OPTION_MS_MAX */
    FA_OPT_CHOICE, /* one of the names in `choices` */
    FA_OPT_STRING, /* any text (kept in environ, not copied); empty: not set */
};

/* The largest values taken; a larger one, or one that overflows on its way (a suffix), is
 * refused with a warning. They keep what the code derives from a value from wrapping: times
 * add a delay to the clock up to ten times over (a parked heap waits ten purge delays), and
 * counts go into 32-bit fields. */
#define FA_OPTION_MS_MAX (1ull << 52) /* 142,000 years */
#define FA_OPTION_COUNT_MAX 0x7fffffffull
#define FA_OPTION_SIZE_MAX (1ull << 62)

enum fa_option_id {
#define FA_OPTION_ENUM(id, name, kind, def, choices, help) FA_OPTION_##id,
    FA_OPTION_TABLE(FA_OPTION_ENUM)
#undef FA_OPTION_ENUM
        FA_OPTION_COUNT
};

/* Values of the choices, in the order of their names in the table. */
enum fa_stats_format { FA_STATS_OFF, FA_STATS_TEXT, FA_STATS_JSON };
enum fa_mode { FA_MODE_FAST, FA_MODE_LAB };
enum fa_policy {
    FA_POLICY_FIRST,
    FA_POLICY_NEXT,
    FA_POLICY_BEST,
    FA_POLICY_WORST,
    FA_POLICY_SEGREGATED,
    FA_POLICY_TLSF,
    FA_POLICY_BUDDY,
    FA_POLICY_SLAB,
    FA_POLICY_COUNT /* not a choice: how many there are */
};
enum fa_lab_index { FA_LAB_INDEX_TREE, FA_LAB_INDEX_LIST };
enum fa_lock_mode { FA_LOCK_GLOBAL, FA_LOCK_THREAD, FA_LOCK_ARENAS };

/* Current values, indexed by enum fa_option_id; defaults until _fa_options_init runs. */
extern long long _fa_option_values[FA_OPTION_COUNT];

#define fa_option(id) (_fa_option_values[FA_OPTION_##id])
#define fa_option_str(id) ((const char *)(uintptr_t)_fa_option_values[FA_OPTION_##id])
/* The options the environment set (bit FA_OPTION_<id>), for a default that depends on the
 * library: libfitalloc-secure.so turns secure mode on unless FITALLOC_SECURE says otherwise. */
extern uint64_t _fa_options_given;
#define fa_option_given(id) ((_fa_options_given >> FA_OPTION_##id) & 1)

/* Read FITALLOC_* from environ; warns about bad values, misspelt names and options the mode
 * ignores. Returns false when environ is not set up yet (very early in process start): call
 * again later. */
_Bool _fa_options_init(void);
/* A warning about the options, on stderr; silent in a process that FITALLOC_ONLY leaves out. */
void _fa_option_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* fa_option_get (fitalloc.h): an option's value by its name without the prefix. */
long long _fa_option_by_name(const char *name);

#endif

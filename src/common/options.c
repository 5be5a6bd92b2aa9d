/* Reading the option table (options.h) from the environment without allocating. */
#include "common/options.h"

#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "common/message.h"
#include "platform/compiler.h"
#include "platform/os.h"

static inline int lower_ascii(char c)
{
    return (c >= 'A' && c <= 'Z') ? c + 32 : c;
}

/* ASCII case-insensitive compare of at most n bytes (strncasecmp depends on the locale, which
 * may allocate). */
static int strncasecmp_ascii(const char *a, const char *b, size_t n)
{
    for (; n; a++, b++, n--) {
        int ca = lower_ascii(*a), cb = lower_ascii(*b);
        if (ca != cb || !ca)
            return ca - cb;
    }
    return 0;
}

static inline int strcasecmp_ascii(const char *a, const char *b)
{
    return strncasecmp_ascii(a, b, SIZE_MAX);
}

uint64_t _fa_options_given;
long long _fa_option_values[FA_OPTION_COUNT] = {
#define FA_OPTION_DEFAULT(id, name, kind, def, choices, help) def,
    FA_OPTION_TABLE(FA_OPTION_DEFAULT)
#undef FA_OPTION_DEFAULT
};

static const struct {
    const char *name;
    enum fa_option_kind kind;
    const char *choices;
} option_specs[FA_OPTION_COUNT] = {
#define FA_OPTION_SPEC(id, name, kind, def, choices, help) {name, kind, choices},
    FA_OPTION_TABLE(FA_OPTION_SPEC)
#undef FA_OPTION_SPEC
};

static const char *const kind_help[] = {
    [FA_OPT_BOOL] = "1/0, yes/no, true/false or on/off",
    [FA_OPT_COUNT] = "a non-negative integer up to 2^31 - 1",
    [FA_OPT_SIZE] = "a size in bytes with optional K, M or G, up to 2^62",
    [FA_OPT_MS] = "milliseconds, or seconds with an s suffix, up to 2^52 ms",
    [FA_OPT_CHOICE] = "one of",
    [FA_OPT_STRING] = "text",
};

static bool word_is(const char *s, const char *a, const char *b, const char *c, const char *d)
{
    return !strcasecmp_ascii(s, a) || !strcasecmp_ascii(s, b) || !strcasecmp_ascii(s, c) ||
           !strcasecmp_ascii(s, d);
}

/* The index of `text` among the names in `choices` ("a|b|c"), in any case, or -1. */
static int choice_index(const char *choices, const char *text)
{
    size_t len = strlen(text);
    int index = 0;
    for (const char *c = choices; *c; index++) {
        const char *end = strchr(c, '|');
        size_t n = end ? (size_t)(end - c) : strlen(c);
        if (n == len && !strncasecmp_ascii(c, text, n))
            return index;
        c += n + (end != NULL);
    }
    return -1;
}

static int bool_value(const char *text)
{
    if (word_is(text, "1", "yes", "true", "on"))
        return 1;
    if (word_is(text, "0", "no", "false", "off"))
        return 0;
    return -1;
}

/* Parse `text` as option `id`; false if it does not parse. */
static bool parse_value(const char *text, int id, long long *out)
{
    enum fa_option_kind kind = option_specs[id].kind;
    if (kind == FA_OPT_STRING) {
        *out = *text ? (long long)(uintptr_t)text : 0;
        return true;
    }
    if (kind == FA_OPT_BOOL || kind == FA_OPT_CHOICE) {
        int v = kind == FA_OPT_CHOICE ? choice_index(option_specs[id].choices, text) : -1;
        /* A choice list starting "0|1|" also takes the boolean words (FITALLOC_STATS=yes). */
        if (v < 0 && (kind == FA_OPT_BOOL || !strncmp(option_specs[id].choices, "0|1|", 4)))
            v = bool_value(text);
        *out = v;
        return v >= 0;
    }
    const char *s = text;
    if (*s < '0' || *s > '9')
        return false;
    unsigned long long max = kind == FA_OPT_MS      ? FA_OPTION_MS_MAX
                             : kind == FA_OPT_COUNT ? FA_OPTION_COUNT_MAX
                                                    : FA_OPTION_SIZE_MAX;
    unsigned long long v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        unsigned digit = (unsigned)(*s - '0');
        if (v > (max - digit) / 10)
            return false;
        v = v * 10 + digit;
    }
    unsigned shift = 0;
    if (kind == FA_OPT_SIZE && *s) {
        switch (*s | 0x20) {
        case 'k': shift = 10; break;
        case 'm': shift = 20; break;
        case 'g': shift = 30; break;
        default: return false;
        }
        s++;
        if ((*s | 0x20) == 'i')
            s++;
        if ((*s | 0x20) == 'b')
            s++;
    } else if (kind == FA_OPT_MS && *s) {
        if ((s[0] | 0x20) == 's' && !s[1]) {
            if (v > max / 1000) /* seconds that overflow once in milliseconds */
                return false;
            v *= 1000;
            s++;
        } else if ((s[0] | 0x20) == 'm' && (s[1] | 0x20) == 's' && !s[2]) {
            s += 2;
        }
    }
    if (*s || v > max >> shift)
        return false;
    *out = (long long)(v << shift);
    return true;
}

static void warn_bad_value(int id, const char *text)
{
    const char *kind = kind_help[option_specs[id].kind];
    if (option_specs[id].kind == FA_OPT_CHOICE) {
        /* Name the default by its choice: the n-th name of the list. */
        const char *c = option_specs[id].choices;
        for (long long i = 0; i < _fa_option_values[id] && strchr(c, '|'); i++)
            c = strchr(c, '|') + 1;
        const char *end = strchr(c, '|');
        _fa_option_warning("fitalloc: warning: FITALLOC_%s=%s is not %s %s; using %.*s\n",
                           option_specs[id].name, text, kind, option_specs[id].choices,
                           (int)(end ? end - c : (long)strlen(c)), c);
        return;
    }
    _fa_option_warning("fitalloc: warning: FITALLOC_%s=%s is not %s; using %lld\n",
                       option_specs[id].name, text, kind, _fa_option_values[id]);
}

/* Compared with every variable of the environment. */
static const char prefix[] FA_STARTUP_CONST = "FITALLOC_";

/* Set by FITALLOC_ONLY in the processes it leaves out. */
static bool quiet;

void _fa_option_warning(const char *fmt, ...)
{
    if (quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    _fa_vmessage(2, fmt, ap);
    va_end(ap);
}

/* Whether var starts with FITALLOC_. Every process runs this on each variable of its
 * environment, twice: the first letter settles nearly all of them without a call. */
static inline bool has_prefix(const char *var)
{
    return var[0] == 'F' && !strncmp(var, prefix, 9);
}

/* The value of FITALLOC_<name> in env, or NULL. */
static const char *env_value(char *const *env, const char *name)
{
    size_t len = strlen(name);
    for (; *env; env++)
        if (has_prefix(*env) && !strncmp(*env + 9, name, len) && (*env)[9 + len] == '=')
            return *env + 10 + len;
    return NULL;
}

/* FITALLOC_ONLY=name, and this process was started from a file of another name. */
static bool left_out_by_only(const char *only)
{
    const char *exe = _fa_os_exec_name();
    if (!only || !*only || !exe)
        return false;
    const char *slash = strrchr(exe, '/');
    return strcmp(slash ? slash + 1 : exe, only) != 0;
}

/* Edit distance between a[0..alen) and b (ASCII case folded) if it is at most `limit`, else
 * limit + 1. Every process with an unknown FITALLOC_ name runs this against the options, so it
 * computes only the cells within `limit` of the diagonal (those beyond are limit + 1), and a row
 * with none within the limit ends it. */
#define NAME_MAX_COMPARED 40
static unsigned name_distance(const char *a, size_t alen, const char *b, unsigned limit)
{
    size_t blen = strlen(b);
    unsigned over = limit + 1;
    if (alen > NAME_MAX_COMPARED || blen > NAME_MAX_COMPARED || alen > blen + limit ||
        blen > alen + limit)
        return over;
    unsigned rows[2][NAME_MAX_COMPARED + 2];
    unsigned *prev = rows[0], *row = rows[1];
    for (size_t j = 0; j <= blen + 1; j++)
        prev[j] = j < over ? (unsigned)j : over;
    for (size_t i = 1; i <= alen; i++) {
        size_t lo = i > limit ? i - limit : 1, hi = i + limit < blen ? i + limit : blen;
        unsigned least = row[lo - 1] = lo == 1 && i < over ? (unsigned)i : over;
        for (size_t j = lo; j <= hi; j++) {
            unsigned d = prev[j - 1] + (lower_ascii(a[i - 1]) != lower_ascii(b[j - 1]));
            d = prev[j] + 1 < d ? prev[j] + 1 : d;
            d = row[j - 1] + 1 < d ? row[j - 1] + 1 : d;
            row[j] = d < over ? d : over;
            least = row[j] < least ? row[j] : least;
        }
        row[hi + 1] = over;
        if (least == over)
            return over;
        unsigned *t = prev;
        prev = row;
        row = t;
    }
    return prev[blen];
}

/* The option that an unknown name was probably meant to be: one edit away (two for names of
 * six letters or more), or the start of its name (at least three letters); -1 if none. Other
 * tools' own FITALLOC_ names (FITALLOC_LIB, FITALLOC_TEST_SIZE) are far from every option,
 * and may continue one (FITALLOC_SECURE_LIB). */
static int option_meant(const char *name, size_t len)
{
    int meant = -1;
    unsigned closest = ~0u;
    for (int i = 0; i < FA_OPTION_COUNT; i++) {
        const char *option = option_specs[i].name;
        size_t option_len = strlen(option);
        size_t shorter = len < option_len ? len : option_len;
        unsigned apart = (unsigned)(len > option_len ? len - option_len : option_len - len);
        unsigned limit = option_len >= 6 ? 2 : 1;
        bool prefix = len == shorter && len >= 3 && !strncasecmp_ascii(name, option, len);
        /* The distance is at least the difference of the lengths: most names stop here. */
        unsigned distance = prefix          ? apart
                            : apart > limit ? ~0u
                                            : name_distance(name, len, option, limit);
        if ((distance <= limit || prefix) && distance < closest) {
            closest = distance;
            meant = i;
        }
    }
    return meant;
}

/* The lab's own options (docs/options.md, "The policy lab"). */
static bool is_lab_option(int id)
{
    return !strncmp(option_specs[id].name, "LAB_", 4) || id == FA_OPTION_policy ||
           id == FA_OPTION_lock || id == FA_OPTION_arenas;
}

/* Options that the mode in force does not use: said, since the program would otherwise run
 * without what was asked (a policy, secure mode's checks). */
static void warn_ignored(uint64_t set)
{
    if (fa_option(mode) != FA_MODE_LAB) {
        for (int id = 0; id < FA_OPTION_COUNT; id++)
            if ((set >> id & 1) && is_lab_option(id))
                _fa_option_warning(
                    "fitalloc: warning: FITALLOC_%s has no effect without FITALLOC_MODE=lab\n",
                    option_specs[id].name);
    } else if (fa_option(secure)) {
        _fa_option_warning("fitalloc: warning: FITALLOC_SECURE does not apply to the lab "
                           "(FITALLOC_MODE=lab): its heaps have no canaries, quarantine or "
                           "guard pages\n");
    }
}

_Static_assert(FA_OPTION_COUNT <= 64, "options set are kept in a 64-bit mask");

bool _fa_options_init(void)
{
    char *const *env = _fa_os_environ();
    if (!env)
        return false;
    quiet = left_out_by_only(env_value(env, "ONLY"));
    const char *unknown = NULL;
    uint64_t set = 0;
    for (; *env; env++) {
        const char *var = *env;
        if (!has_prefix(var))
            continue;
        const char *name = var + 9;
        const char *eq = strchr(name, '=');
        if (!eq)
            continue;
        size_t len = (size_t)(eq - name);
        int id = -1;
        for (int i = 0; i < FA_OPTION_COUNT; i++)
            if (strlen(option_specs[i].name) == len && !strncmp(option_specs[i].name, name, len))
                id = i;
        if (id < 0) {
            int meant = option_meant(name, len);
            if (meant >= 0)
                _fa_option_warning("fitalloc: warning: FITALLOC_%.*s is not a fitalloc option "
                                   "(FITALLOC_%s?); ignored\n",
                                   (int)len, name, option_specs[meant].name);
            else
                unknown = var;
            continue;
        }
        set |= (uint64_t)1 << id;
        long long value;
        if (parse_value(eq + 1, id, &value))
            _fa_option_values[id] = value;
        else if (id == FA_OPTION_profile_rate)
            _fa_option_values[id] =
                0; /* the profiler says so in its own line, and does not start */
        else
            warn_bad_value(id, eq + 1);
    }
    _fa_options_given = set;
    warn_ignored(set);
    /* Other tools use the FITALLOC_ prefix too (test drivers, the bench): only mention a name
     * far from every option when asked to be verbose. */
    if (unknown && fa_option(verbose) && !quiet)
        _fa_message(2, "fitalloc: note: %s is not a fitalloc option (see docs/options.md)\n",
                    unknown);
    /* A process that FITALLOC_ONLY leaves out runs the allocator without a word. */
    if (quiet) {
        _fa_option_values[FA_OPTION_stats] = 0;
        _fa_option_values[FA_OPTION_trace] = 0;
        _fa_option_values[FA_OPTION_lab_hist] = 0;
        _fa_option_values[FA_OPTION_lab_check] = 0;
        _fa_option_values[FA_OPTION_verbose] = 0;
    }
    return true;
}

long long _fa_option_by_name(const char *name)
{
    if (!name)
        return -1;
    if (!strncmp(name, "FITALLOC_", 9))
        name += 9;
    for (int i = 0; i < FA_OPTION_COUNT; i++)
        if (!strcasecmp_ascii(option_specs[i].name, name))
            return _fa_option_values[i];
    return -1;
}

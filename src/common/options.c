/* Reading the option table (options.h) from the environment without allocating. */
#include "common/options.h"

#include <stdint.h>
#include <string.h>

#include "common/message.h"
#include "platform/compiler.h"
#include "platform/os.h"

/* ASCII case-insensitive compare (strcasecmp depends on the locale, which may allocate). */
static inline int strcasecmp_ascii(const char *a, const char *b)
{
    for (;; a++, b++) {
        int ca = (*a >= 'A' && *a <= 'Z') ? *a + 32 : *a;
        int cb = (*b >= 'A' && *b <= 'Z') ? *b + 32 : *b;
        if (ca != cb || !ca)
            return ca - cb;
    }
}

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

/* The index of `text` among the names in `choices` ("a|b|c"), or -1. */
static int choice_index(const char *choices, const char *text)
{
    size_t len = strlen(text);
    int index = 0;
    for (const char *c = choices; *c; index++) {
        const char *end = strchr(c, '|');
        size_t n = end ? (size_t)(end - c) : strlen(c);
        if (n == len && !strncmp(c, text, n))
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
        _fa_message(2, "fitalloc: warning: FITALLOC_%s=%s is not %s %s; using %.*s\n",
                    option_specs[id].name, text, kind, option_specs[id].choices,
                    (int)(end ? end - c : (long)strlen(c)), c);
        return;
    }
    _fa_message(2, "fitalloc: warning: FITALLOC_%s=%s is not %s; using %lld\n",
                option_specs[id].name, text, kind, _fa_option_values[id]);
}

/* Compared with every variable of the environment. */
static const char prefix[] FA_STARTUP_CONST = "FITALLOC_";

bool _fa_options_init(void)
{
    char *const *env = _fa_os_environ();
    if (!env)
        return false;
    const char *unknown = NULL;
    for (; *env; env++) {
        const char *var = *env;
        if (strncmp(var, prefix, 9) != 0)
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
            unknown = var;
            continue;
        }
        long long value;
        if (parse_value(eq + 1, id, &value))
            _fa_option_values[id] = value;
        else
            warn_bad_value(id, eq + 1);
    }
    /* Other tools use the FITALLOC_ prefix too (test drivers, the bench): only mention a name
     * we do not know when asked to be verbose. */
    if (unknown && fa_option(verbose))
        _fa_message(2, "fitalloc: note: %s is not a fitalloc option (see docs/options.md)\n",
                    unknown);
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

/* The environment the library sees (replay_env.h). */
#include "replay_env.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

extern char **environ;

/* The last one for --mesh only. */
static const char *const engine_settings[] = {
    "FITALLOC_PURGE_THREAD=0",
    "FITALLOC_PURGE_DELAY=1000000000",
    "FITALLOC_MESH=1",
};
#define ENGINE_SETTINGS (sizeof engine_settings / sizeof engine_settings[0])
#define MESH_SETTING (1u << (ENGINE_SETTINGS - 1))

/* Byte compares of our own: this runs before any constructor, sanitizer runtimes' included,
 * so nothing the C library or a sanitizer might intercept. */
static bool starts_with(const char *s, const char *prefix)
{
    while (*prefix)
        if (*s++ != *prefix++)
            return false;
    return true;
}

static bool same(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

/* Which engine setting var is, as a bit; 0 for anything else. */
static unsigned engine_setting(const char *var)
{
    for (size_t i = 0; i < ENGINE_SETTINGS; i++)
        if (same(var, engine_settings[i]))
            return 1u << i;
    return 0;
}

/* The settings this command line's engine row needs, as bits. */
static unsigned wanted_settings(int argc, char **argv)
{
    unsigned wanted = (1u << ENGINE_SETTINGS) - 1 - MESH_SETTING;
    for (int i = 1; i < argc; i++)
        if (same(argv[i], "--mesh"))
            wanted |= MESH_SETTING;
    return wanted;
}

/* Take the caller's FITALLOC_* variables out of the environment, in place (the array the
 * library's options code will read as `environ`). */
static void remove_fitalloc_options(int argc, char **argv, char **envp)
{
    unsigned wanted = wanted_settings(argc, argv);
    char **out = envp;
    for (char **e = envp; e && *e; e++)
        if (!starts_with(*e, "FITALLOC_") || (engine_setting(*e) & wanted))
            *out++ = *e;
    if (envp)
        *out = NULL;
}

/* Run before every constructor: the C library calls the functions of an executable's
 * .preinit_array with main's arguments first. */
typedef void preinit_fn(int argc, char **argv, char **envp);
__attribute__((section(".preinit_array"), used)) static preinit_fn *const run_first =
    remove_fitalloc_options;

void replay_env_for_engine(int argc, char **argv)
{
    unsigned wanted = wanted_settings(argc, argv), found = 0;
    size_t count = 0;
    for (char **e = environ; e && *e; e++, count++)
        found |= engine_setting(*e);
    if (found == wanted)
        return;
    char **env = calloc(count + ENGINE_SETTINGS + 1, sizeof *env);
    if (env) {
        size_t k = 0;
        for (char **e = environ; e && *e; e++)
            if (!engine_setting(*e))
                env[k++] = *e;
        for (size_t i = 0; i < ENGINE_SETTINGS; i++)
            if (wanted & (1u << i))
                env[k++] = (char *)engine_settings[i];
        env[k] = NULL;
        execve("/proc/self/exe", argv, env);
        free(env);
    }
    fprintf(stderr, "fitalloc-replay: warning: cannot restart with the engine's replay "
                    "settings; the engine may purge memory during the replay\n");
}

/* Writing the map files (map_out.h). */
#include "map_out.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

bool map_out_prepare(const char *dir)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
        fprintf(stderr, "fitalloc-replay: --map-out: path too long: %s\n", dir);
        return false;
    }
    /* Each parent in turn, then the directory itself (mkdir -p). */
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != 0)
            continue;
        char c = *p;
        *p = 0;
        struct stat st;
        if (mkdir(path, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, "fitalloc-replay: --map-out: cannot create %s: %s\n", path,
                    strerror(errno));
            return false;
        }
        if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
            fprintf(stderr, "fitalloc-replay: --map-out: %s is not a directory\n", path);
            return false;
        }
        *p = c;
        if (!c)
            return true;
    }
}

static FILE *open_output(const char *dir, const char *config, const char *kind, char *path)
{
    snprintf(path, PATH_MAX, "%s/%s.%s.csv", dir, config, kind);
    FILE *f = fopen(path, "w");
    if (!f)
        fprintf(stderr, "fitalloc-replay: cannot write %s: %s\n", path, strerror(errno));
    return f;
}

static bool close_output(FILE *f, const char *path)
{
    bool ok = !ferror(f);
    ok &= fclose(f) == 0;
    if (!ok)
        fprintf(stderr, "fitalloc-replay: error writing %s\n", path);
    return ok;
}

bool map_out_write(const char *dir, const char *config, const struct replay_result *result)
{
    char path[PATH_MAX];
    FILE *f = open_output(dir, config, "blocks", path);
    if (!f)
        return false;
    fputs("alloc_op,free_op,offset,size\n", f);
    const struct replay_block *blocks = result->blocks.items;
    for (size_t i = 0; i < result->blocks.count; i++)
        fprintf(f, "%llu,%lld,%llu,%llu\n", (unsigned long long)blocks[i].alloc_op,
                (long long)blocks[i].free_op, (unsigned long long)blocks[i].offset,
                (unsigned long long)blocks[i].size);
    return close_output(f, path) && map_out_write_series(dir, config, result);
}

bool map_out_write_series(const char *dir, const char *config, const struct replay_result *result)
{
    char path[PATH_MAX];
    FILE *f = open_output(dir, config, "series", path);
    if (!f)
        return false;
    fputs("op,heap_bytes,live_bytes,free_bytes,largest_free,free_blocks\n", f);
    const struct replay_point *pts = result->series.items;
    for (size_t i = 0; i < result->series.count; i++)
        fprintf(f, "%llu,%llu,%llu,%llu,%llu,%llu\n", (unsigned long long)pts[i].op,
                (unsigned long long)pts[i].heap_bytes, (unsigned long long)pts[i].live_bytes,
                (unsigned long long)pts[i].free_bytes, (unsigned long long)pts[i].largest_free,
                (unsigned long long)pts[i].free_blocks);
    return close_output(f, path);
}

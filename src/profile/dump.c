/* A profile's file, in the heap-profile format of gperftools that google-pprof and jeprof
 * read:
 *
 *   heap profile: <live count>: <live bytes> [<allocated count>: <allocated bytes>] @ heap_v2/<rate>
 *   <live count>: <live bytes> [<allocated count>: <allocated bytes>] @ 0x<pc> 0x<pc> ...
 *   ...
 *
 *   MAPPED_LIBRARIES:
 *   <the process's /proc/self/maps>
 *
 * one line per stack, innermost frame (the caller of malloc) first. The counts are the samples
 * themselves, unscaled: "heap_v2/<rate>" tells pprof they are Poisson samples at that mean
 * distance, and it scales each line by 1 / (1 - exp(-(bytes / count) / rate)). The maps let it
 * find the object and offset of each address, so a position-independent program resolves. */
#include <string.h>

#include "common/message.h"
#include "profile/profile_internal.h"
#include "platform/os.h"

struct out {
    int fd;
    int error;
    size_t len;
    char buf[2048];
};

static void flush(struct out *o)
{
    if (o->len && !o->error)
        o->error = _fa_os_write(o->fd, o->buf, o->len);
    o->len = 0;
}

static void put(struct out *o, const char *s)
{
    for (; *s; s++) {
        if (o->len == sizeof o->buf)
            flush(o);
        o->buf[o->len++] = *s;
    }
}

static void put_number(struct out *o, uint64_t v, unsigned base)
{
    char digits[24], *d = digits + sizeof digits;
    *--d = 0;
    do
        *--d = "0123456789abcdef"[v % base];
    while ((v /= base) != 0);
    put(o, d);
}

/* "count: bytes", as both kinds of file write their counts. */
static void put_count_bytes(struct out *o, uint64_t count, uint64_t bytes)
{
    put_number(o, count, 10);
    put(o, ": ");
    put_number(o, bytes, 10);
}

static void put_counts(struct out *o, const struct fa_profile_counts *c)
{
    put_count_bytes(o, c->live_count, c->live_bytes);
    put(o, " [");
    put_count_bytes(o, c->alloc_count, c->alloc_bytes);
    put(o, "] @");
}

static void put_frames(struct out *o, const struct fa_profile_stack *s)
{
    for (uint32_t i = 0; i < s->depth; i++) {
        put(o, " 0x");
        put_number(o, s->frames[i], 16);
    }
    put(o, "\n");
}

/* Opens prefix.<pid>.<name><suffix> for o; false after a warning line. */
static bool open_file(struct out *o, const char *prefix, const char *name, const char *suffix,
                      char *path)
{
    o->len = 0;
    put(o, prefix);
    put(o, ".");
    put_number(o, (uint64_t)_fa_os_pid(), 10);
    put(o, ".");
    put(o, name);
    put(o, suffix);
    memcpy(path, o->buf, o->len);
    path[o->len] = 0;
    o->len = 0;
    o->fd = _fa_os_create_append(path);
    if (o->fd < 0) {
        _fa_message(2, "fitalloc: warning: FITALLOC_PROFILE: cannot write %s (%s)\n", path,
                    _fa_os_error_text(-o->fd));
        return false;
    }
    return true;
}

/* Flushes and closes o's file, with a warning line if not all of it was written. */
static bool close_file(struct out *o, const char *path, bool ok)
{
    flush(o);
    ok = ok && !o->error;
    _fa_os_close(o->fd);
    if (!ok)
        _fa_message(2, "fitalloc: warning: FITALLOC_PROFILE: could not write all of %s\n", path);
    return ok;
}

/* The sampling rate, as both kinds of file end their first line. */
static void put_rate(struct out *o)
{
    put(o, "heap_v2/");
    put_number(o, _fa_profile_rate, 10);
    put(o, "\n");
}

static const struct fa_profile_counts *counts_of(const struct fa_profile_stack *s, bool peak)
{
    return peak ? &s->peak : &s->now;
}

/* A line per stack: for the .heap file every stack that allocated, with put_counts; for the
 * .slack file every stack with live samples, their bytes and the bytes granted for them. */
static void put_stacks(struct out *o, bool peak, bool slack)
{
    for (struct fa_profile_stack *s = _fa_profile_stacks; s; s = s->next) {
        const struct fa_profile_counts *c = counts_of(s, peak);
        if (!(slack ? c->live_count : c->alloc_count))
            continue;
        if (slack) {
            put_count_bytes(o, c->live_count, c->live_bytes);
            put(o, " ");
            put_number(o, c->live_granted, 10);
            put(o, " @");
        } else {
            put_counts(o, c);
        }
        put_frames(o, s);
    }
}

/* prefix.<pid>.<name>.slack: per stack of live samples, the samples, their bytes and the bytes
 * granted for them, unscaled, for `fitalloc profile` (each line scaled as the .heap file's):
 *
 *   fitalloc slack profile: heap_v2/<rate>
 *   <live count>: <live bytes> <granted bytes> @ 0x<pc> 0x<pc> ... */
static bool write_slack(const char *prefix, const char *name, bool peak)
{
    char path[4200];
    struct out *o = &(struct out){.fd = -1};
    if (!open_file(o, prefix, name, ".slack", path))
        return false;
    put(o, "fitalloc slack profile: ");
    put_rate(o);
    put_stacks(o, peak, true);
    return close_file(o, path, true);
}

bool _fa_profile_write(const char *prefix, const char *name, bool peak)
{
    char path[4200];
    struct out *o = &(struct out){.fd = -1};
    if (!open_file(o, prefix, name, ".heap", path))
        return false;
    struct fa_profile_counts total = {0};
    for (struct fa_profile_stack *s = _fa_profile_stacks; s; s = s->next) {
        const struct fa_profile_counts *c = counts_of(s, peak);
        total.live_count += c->live_count;
        total.live_bytes += c->live_bytes;
        total.alloc_count += c->alloc_count;
        total.alloc_bytes += c->alloc_bytes;
    }
    put(o, "heap profile: ");
    put_counts(o, &total);
    put(o, " ");
    put_rate(o);
    put_stacks(o, peak, false);
    put(o, "\nMAPPED_LIBRARIES:\n");
    flush(o);
    bool ok = close_file(o, path, !o->error && _fa_os_copy_file("/proc/self/maps", o->fd));
    return (_fa_profile_granted_more ? write_slack(prefix, name, peak) : true) && ok;
}

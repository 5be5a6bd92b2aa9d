/* Messages without malloc or stdio (message.h): a small printf into a stack buffer, then
 * write(2). Supports %d %i %u %x %p %s %c %% with l/ll/z length, width, '-', '0' and %.*s. */
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "common/message.h"
#include "common/process.h"
#include "platform/os.h"

struct out {
    int fd;
    size_t len;
    char buf[512];
};

static void put(struct out *o, const char *s, size_t n)
{
    while (n > 0) {
        if (o->len == sizeof o->buf) {
            _fa_os_write(o->fd, o->buf, o->len);
            o->len = 0;
        }
        size_t k = sizeof o->buf - o->len;
        if (k > n)
            k = n;
        memcpy(o->buf + o->len, s, k);
        o->len += k;
        s += k;
        n -= k;
    }
}

static void put_padded(struct out *o, const char *s, size_t n, int width, bool left, char pad)
{
    if (!left)
        for (int i = (int)n; i < width; i++)
            put(o, &pad, 1);
    put(o, s, n);
    if (left)
        for (int i = (int)n; i < width; i++)
            put(o, " ", 1);
}

/* Digits of v in base 10 or 16 into the end of buf; returns the first digit. */
static char *digits(char *end, unsigned long long v, unsigned base)
{
    char *p = end;
    do {
        *--p = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    return p;
}

void _fa_vmessage(int fd, const char *fmt, va_list ap)
{
    struct out o;
    o.fd = fd;
    o.len = 0;
    for (const char *f = fmt; *f; f++) {
        if (*f != '%') {
            put(&o, f, 1);
            continue;
        }
        f++;
        bool left = false;
        char pad = ' ';
        int width = 0, precision = -1, longs = 0;
        for (; *f == '-' || *f == '0'; f++) {
            if (*f == '-')
                left = true;
            else
                pad = '0';
        }
        for (; *f >= '0' && *f <= '9'; f++)
            width = width * 10 + (*f - '0');
        if (f[0] == '.' && f[1] == '*') {
            precision = va_arg(ap, int);
            f += 2;
        }
        for (; *f == 'l' || *f == 'z'; f++)
            longs = *f == 'z' ? 2 : longs + 1;
        char num[32], *end = num + sizeof num, *s;
        switch (*f) {
        case 'd':
        case 'i': {
            long long v = longs ? va_arg(ap, long long) : va_arg(ap, int);
            unsigned long long mag = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
            s = digits(end, mag, 10);
            if (v < 0)
                *--s = '-';
            put_padded(&o, s, (size_t)(end - s), width, left, pad);
            break;
        }
        case 'u':
        case 'x': {
            unsigned long long v = longs ? va_arg(ap, unsigned long long) : va_arg(ap, unsigned);
            s = digits(end, v, *f == 'x' ? 16 : 10);
            put_padded(&o, s, (size_t)(end - s), width, left, pad);
            break;
        }
        case 'p':
            s = digits(end, (uintptr_t)va_arg(ap, void *), 16);
            *--s = 'x';
            *--s = '0';
            put_padded(&o, s, (size_t)(end - s), width, left, ' ');
            break;
        case 's': {
            const char *str = va_arg(ap, const char *);
            if (!str)
                str = "(null)";
            size_t n = strlen(str);
            if (precision >= 0 && (size_t)precision < n)
                n = (size_t)precision;
            put_padded(&o, str, n, width, left, ' ');
            break;
        }
        case 'c': {
            char c = (char)va_arg(ap, int);
            put(&o, &c, 1);
            break;
        }
        case '%': put(&o, "%", 1); break;
        default:
            put(&o, "%?", 2);
            if (!*f)
                f--;
            break;
        }
    }
    _fa_os_write(fd, o.buf, o.len);
}

void _fa_message(int fd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    _fa_vmessage(fd, fmt, ap);
    va_end(ap);
}

void (*_fa_report_stack)(void);

void _fa_fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    _fa_vmessage(2, fmt, ap);
    va_end(ap);
    void (*stack)(void) = _fa_report_stack;
    _fa_report_stack = NULL;
    if (stack)
        stack();
    _fa_process_fatal(); /* the trace keeps the calls up to the one reported */
    _fa_os_abort();
}

void _fa_invalid_pointer(const char *caller, const void *p)
{
    _fa_fatal("fitalloc: %s(): invalid pointer %p\n", caller, p);
}

void _fa_double_free(const char *caller, const void *p, size_t size)
{
    _fa_fatal("fitalloc: %s(): double free of %p (%zu-byte block)\n", caller, p, size);
}

/* Secure mode's checked copies (docs/security.md), for test_checked_copies.sh:
 *
 *   copies <function> <size> <offset> <length> [<room>]
 *
 * copies <length> bytes to <offset> bytes into a new block of <size> bytes with <function>
 * (memcpy, memmove, memset, __memcpy_chk, __memmove_chk, __memset_chk), called through a
 * pointer so that the compiler neither inlines nor drops it. <room> is what a __*_chk form is
 * told the destination holds (_FORTIFY_SOURCE's object size; default: unknown). Prints "block <address>" on stderr
 * first; "not caught" on stdout if it ran on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *__memcpy_chk(void *dst, const void *src, size_t n, size_t room);
void *__memmove_chk(void *dst, const void *src, size_t n, size_t room);
void *__memset_chk(void *dst, int c, size_t n, size_t room);

static char source[(2 << 20) + 64];

static void *(*volatile copy)(void *, const void *, size_t);
static void *(*volatile copy_chk)(void *, const void *, size_t, size_t);
static void *(*volatile set)(void *, int, size_t);
static void *(*volatile set_chk)(void *, int, size_t, size_t);

int main(int argc, char **argv)
{
    if (argc != 5 && argc != 6)
        return 2;
    const char *fn = argv[1];
    size_t size = strtoul(argv[2], NULL, 10), offset = strtoul(argv[3], NULL, 10),
           len = strtoul(argv[4], NULL, 10);
    size_t room = argc == 6 ? strtoul(argv[5], NULL, 10) : (size_t)-1;
    if (len > sizeof source)
        return 2;
    char *p = malloc(size);
    fprintf(stderr, "block %p\n", (void *)p);
    char *dst = p + offset;
    /* Stored, then read back: the compiler cannot tell which function it calls. */
    if (strcmp(fn, "memcpy") == 0)
        copy = memcpy;
    else if (strcmp(fn, "memmove") == 0)
        copy = memmove;
    else if (strcmp(fn, "memset") == 0)
        set = memset;
    else if (strcmp(fn, "__memcpy_chk") == 0)
        copy_chk = __memcpy_chk;
    else if (strcmp(fn, "__memmove_chk") == 0)
        copy_chk = __memmove_chk;
    else if (strcmp(fn, "__memset_chk") == 0)
        set_chk = __memset_chk;
    else
        return 2;
    if (copy)
        copy(dst, source, len);
    else if (set)
        set(dst, 0x41, len);
    else if (copy_chk)
        copy_chk(dst, source, len, room);
    else
        set_chk(dst, 0x41, len, room);
    free(p);
    printf("not caught\n");
    return 0;
}

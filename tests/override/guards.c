/* The default mode's guards (docs/security.md), one misuse per run, for test_default_guards.sh:
 *
 *   guards runaway <size> loop|memcpy   write 1 MiB past a block of <size> bytes: the write must
 *                                       fault (memory no page has handed out is inaccessible)
 *   guards fresh <bytes>                write <bytes> past the only block of a fresh page (a size
 *                                       class nothing else uses), then malloc another: malloc
 *                                       must report the overflow
 *   guards fits                         the same block written only inside, then malloc: runs on
 *   guards freed <size> write|read|free write into, read or free again a freed block of <size>
 *                                       bytes: a big one (256 KiB) is inaccessible for a while
 *   guards resident <size>              free 16 written blocks of <size> bytes and print how many
 *                                       of the last one's pages are still resident: none of a big
 *                                       one (the last ones held give their memory back)
 *
 * Prints "block <address>" on stderr before the misuse; "not caught" on stdout if it ran on.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

static char pattern[(1 << 20) + 64];

/* The class of 3000-byte requests (3072-byte blocks): one block provisioned at a time. */
#define FRESH_SIZE 3000

static void *(*volatile copy)(void *, const void *, size_t) = memcpy;

static void write_bytes(char *p, size_t from, size_t len)
{
    volatile char *v = p;
    for (size_t i = 0; i < len; i++)
        v[from + i] = 0x41;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    memset(pattern, 0x41, sizeof pattern);
    if (strcmp(argv[1], "runaway") == 0 && argc == 4) {
        size_t n = strtoul(argv[2], NULL, 10);
        char *p = malloc(n);
        fprintf(stderr, "block %p\n", (void *)p);
        if (strcmp(argv[3], "memcpy") == 0)
            copy(p + n, pattern, (size_t)1 << 20);
        else
            write_bytes(p, n, (size_t)1 << 20);
        free(p);
    } else if ((strcmp(argv[1], "fresh") == 0 && argc == 3) || strcmp(argv[1], "fits") == 0) {
        char *p = malloc(FRESH_SIZE);
        size_t room = malloc_usable_size(p);
        fprintf(stderr, "block %p\n", (void *)p);
        if (argc == 3)
            write_bytes(p, room, strtoul(argv[2], NULL, 10));
        else
            write_bytes(p, 0, room);
        char *q = malloc(FRESH_SIZE);
        free(q);
        free(p);
    } else if (strcmp(argv[1], "freed") == 0 && argc == 4) {
        size_t n = strtoul(argv[2], NULL, 10);
        char *p = malloc(n);
        memset(p, 0x22, n);
        fprintf(stderr, "block %p\n", (void *)p);
        free(p);
        if (strcmp(argv[3], "write") == 0)
            write_bytes(p, 0, 16);
        else if (strcmp(argv[3], "read") == 0)
            printf("read %d\n", ((volatile char *)p)[n / 2]);
        else
            free(p);
    } else if (strcmp(argv[1], "resident") == 0 && argc == 3) {
        size_t n = strtoul(argv[2], NULL, 10), page = (size_t)sysconf(_SC_PAGESIZE);
        char *blocks[16], *p = NULL;
        for (size_t i = 0; i < 16; i++) {
            blocks[i] = malloc(n);
            memset(blocks[i], 0x22, n);
        }
        for (size_t i = 0; i < 16; i++)
            free(p = blocks[i]);
        /* The whole pages inside the block (its first one may hold a neighbour's bytes). */
        char *from = (char *)(((uintptr_t)p + page - 1) & ~(uintptr_t)(page - 1));
        size_t pages = (size_t)(p + n - from) / page, resident = 0;
        unsigned char in_core[256];
        if (pages > sizeof in_core || mincore(from, pages * page, in_core) != 0)
            return 2;
        for (size_t i = 0; i < pages; i++)
            resident += in_core[i] & 1;
        printf("resident %zu of %zu\n", resident, pages);
        return 0;
    } else {
        return 2;
    }
    printf("not caught\n");
    return 0;
}

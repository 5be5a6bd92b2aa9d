/* A segment's closed tail (docs/security.md, "The default mode's guards") opens 4 small pages
 * at a time: a thread whose first blocks fall into 16 size classes takes 16 pages, and one
 * mprotect each was most of the system calls a short program's first heap cost (record 044).
 * The test counts the calls into the fresh thread's segment through its own mprotect, which
 * the static library's calls reach instead of the C library's. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "check.h"
#include "fitalloc.h"

#define SEGMENT_SIZE ((uintptr_t)4 << 20)
#define CLASSES 16

static uintptr_t watched; /* the segment whose calls are counted, 0 before it is known */
static int calls;

int mprotect(void *addr, size_t len, int prot)
{
    if (watched && ((uintptr_t)addr & ~(SEGMENT_SIZE - 1)) == watched)
        __atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
    return (int)syscall(SYS_mprotect, addr, len, prot);
}

static void *first_blocks(void *arg)
{
    (void)arg;
    /* One block in each of 16 small classes: 16-128 B in 16-byte steps, then 160-512 B. */
    static const size_t sizes[CLASSES] = {16,  32,  48,  64,  80,  96,  112, 128,
                                          160, 192, 224, 256, 320, 384, 448, 512};
    void *blocks[CLASSES];
    blocks[0] = fa_malloc(sizes[0]);
    CHECK(blocks[0] != NULL);
    __atomic_store_n(&watched, (uintptr_t)blocks[0] & ~(SEGMENT_SIZE - 1), __ATOMIC_RELAXED);
    for (int i = 1; i < CLASSES; i++) {
        blocks[i] = fa_malloc(sizes[i]);
        CHECK(blocks[i] != NULL);
        CHECK_EQ((uintptr_t)blocks[i] & ~(SEGMENT_SIZE - 1), watched);
        memset(blocks[i], 1, sizes[i]);
    }
    for (int i = 0; i < CLASSES; i++)
        fa_free(blocks[i]);
    return NULL;
}

int main(void)
{
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, first_blocks, NULL), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
    /* 16 pages opened 4 at a time: 4 calls (a page at a time: 16). */
    if (calls > CLASSES / 4) {
        fprintf(stderr, "%d mprotect calls opened the %d pages of a fresh segment\n", calls,
                CLASSES);
        return 1;
    }
    printf("ok: %d mprotect calls for the %d pages of a fresh segment\n", calls, CLASSES);
    return 0;
}

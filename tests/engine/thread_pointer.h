/* What the thread-pointer tests share (test_thread_pointer_reuse.c, test_thread_pointer_fork.c):
 * a thread that holds blocks of one page, a thread that frees them, and the page as
 * fa_heap_visit shows it. Header-only, like check.h. */
#ifndef FITALLOC_TESTS_THREAD_POINTER_H
#define FITALLOC_TESTS_THREAD_POINTER_H

#include <pthread.h>
#include <stdint.h>

#include "check.h"
#include "fitalloc-stats.h"
#include "fitalloc.h"

#define BLOCKS 64

static void *held[BLOCKS];
static pthread_t holder_self, freer_self;

struct page_seen {
    uintptr_t block;
    int found;
    uintptr_t start, owner;
    size_t used;
};

static void find_page(const struct fa_heap_area *a, void *arg)
{
    struct page_seen *s = arg;
    if (a->kind == FA_AREA_PAGE && (uintptr_t)a->start <= s->block &&
        s->block < (uintptr_t)a->start + a->size) {
        s->found++;
        s->start = (uintptr_t)a->start;
        s->owner = a->owner;
        s->used = a->used;
    }
}

/* The page in use that holds p, as fa_heap_visit shows it. */
static struct page_seen page_of(const void *p)
{
    struct page_seen s = {.block = (uintptr_t)p};
    CHECK_GT(fa_heap_visit(find_page, &s), 0);
    CHECK_EQ(s.found, 1);
    return s;
}

static void hold_blocks(void)
{
    holder_self = pthread_self();
    for (int i = 0; i < BLOCKS; i++)
        CHECK((held[i] = fa_malloc(256)) != NULL);
    /* One page holds them all (a small page has room for hundreds; a power-of-two class, whose
     * first blocks do not come from a page of the class above, heap.c: borrowed classes). */
    for (int i = 1; i < BLOCKS; i++)
        CHECK_EQ(page_of(held[i]).start, page_of(held[0]).start);
    CHECK_EQ(page_of(held[0]).used, BLOCKS);
}

static void *free_held(void *arg)
{
    freer_self = pthread_self();
    for (int i = 0; i < BLOCKS; i++)
        fa_free(held[i]);
    return arg;
}

static pthread_t start_thread(void *(*fn)(void *), size_t stack)
{
    pthread_attr_t attr;
    CHECK_EQ(pthread_attr_init(&attr), 0);
    CHECK_EQ(pthread_attr_setstacksize(&attr, stack), 0);
    pthread_t t;
    CHECK_EQ(pthread_create(&t, &attr, fn, NULL), 0);
    pthread_attr_destroy(&attr);
    return t;
}

static void run_thread(void *(*fn)(void *))
{
    CHECK_EQ(pthread_join(start_thread(fn, 1 << 20), NULL), 0);
}

#endif

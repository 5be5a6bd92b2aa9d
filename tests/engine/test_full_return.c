/* ctest labels: unit */
/* A full page goes back to its queue once its owner has freed a 16th of its blocks (at least
 * one, at most 16), not at its first free (heap.c: move_to_full, full_offset): the blocks
 * freed before that point wait on the page, those freed up to it come back to malloc, no block
 * is lost or given twice, and the heap checker (which checks the count `used` carries with its
 * offset) passes at every step. Also: a thread that ends while one of its full pages holds
 * such blocks, and another thread frees the page's last blocks. With meshing on a full page
 * comes back at its first free, as before the point: the test runs itself again with
 * FITALLOC_MESH=1 and checks that (where meshing can run: not in a debugging-tool build). */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "fitalloc.h"
#include "rerun.h"
#include "threads.h"

typedef struct fa_heap_s fa_heap_t;
void _fa_heap_check(const fa_heap_t *heap);
extern __thread fa_heap_t *_fa_heap_tls;
extern bool _fa_mesh_on;

/* A size of its own class (481-512 bytes), which nothing else in the test allocates; a power
 * of two, so that its first blocks are its own page's (heap.c: borrowed classes). */
#define SIZE 512
#define COUNT 3000
#define PAGE_SHIFT 16 /* small pages: 64 KiB, at 64 KiB-aligned addresses but page 0 */

static void *blocks[COUNT];

static uintptr_t page_of(const void *p)
{
    return (uintptr_t)p >> PAGE_SHIFT;
}

/* The blocks of the page of blocks[0], which the COUNT mallocs have filled. */
static int blocks_of_first_page(int *index)
{
    int n = 0;
    for (int i = 0; i < COUNT; i++)
        if (page_of(blocks[i]) == page_of(blocks[0]))
            index[n++] = i;
    return n;
}

static bool is_one_of(const void *p, void *const *set, int n)
{
    for (int i = 0; i < n; i++)
        if (set[i] == p)
            return true;
    return false;
}

static void comes_back_at_a_16th(void)
{
    for (int i = 0; i < COUNT; i++) {
        blocks[i] = fa_malloc(SIZE);
        CHECK(blocks[i] != NULL);
    }
    static int index[COUNT];
    int in_page = blocks_of_first_page(index);
    int back = _fa_mesh_on ? 1 : in_page / 16 > 16 ? 16 : in_page / 16 ? in_page / 16 : 1;
    CHECK_MSG(in_page >= 32, "the first page holds %d blocks", in_page);
    void *freed[COUNT];
    /* Short of the point: the page stays full, its freed blocks wait there. */
    for (int k = 0; k < back - 1; k++) {
        freed[k] = blocks[index[k]];
        fa_free(freed[k]);
        blocks[index[k]] = NULL;
    }
    _fa_heap_check(_fa_heap_tls);
    void *more[COUNT];
    for (int i = 0; i < COUNT; i++) {
        more[i] = fa_malloc(SIZE);
        CHECK_MSG(!is_one_of(more[i], freed, back - 1),
                  "a block freed into a full page came back before %d of its blocks were free",
                  back);
    }
    _fa_heap_check(_fa_heap_tls);
    /* At the point: the page is back in its queue, and every block freed into it comes back. */
    freed[back - 1] = blocks[index[back - 1]];
    fa_free(freed[back - 1]);
    blocks[index[back - 1]] = NULL;
    _fa_heap_check(_fa_heap_tls);
    void *again[COUNT];
    int found = 0;
    for (int i = 0; i < COUNT; i++) {
        again[i] = fa_malloc(SIZE);
        CHECK(again[i] != NULL);
        found += is_one_of(again[i], freed, back);
    }
    CHECK_MSG(found == back, "%d of the %d blocks freed into the full page came back", found, back);
    _fa_heap_check(_fa_heap_tls);
    for (int i = 0; i < COUNT; i++) {
        fa_free(blocks[i]);
        fa_free(more[i]);
        fa_free(again[i]);
    }
    _fa_heap_check(_fa_heap_tls);
}

/* Every block of many full pages freed in a scattered order: each page passes its point, comes
 * back, empties; the checker sees consistent counts throughout, and the blocks are reusable. */
static void scattered_frees_empty_full_pages(void)
{
    for (int i = 0; i < COUNT; i++)
        blocks[i] = fa_malloc(SIZE);
    for (int stride = 7, i = 0; i < COUNT; i++) {
        int j = (int)(((long)i * stride) % COUNT); /* 7 and COUNT are coprime: a permutation */
        fa_free(blocks[j]);
        if (i % 500 == 0)
            _fa_heap_check(_fa_heap_tls);
    }
    _fa_heap_check(_fa_heap_tls);
    for (int i = 0; i < COUNT; i++) {
        blocks[i] = fa_malloc(SIZE);
        CHECK(blocks[i] != NULL);
        for (int k = 0; k < SIZE; k += 64)
            ((char *)blocks[i])[k] = (char)i;
    }
    for (int i = 0; i < COUNT; i++) {
        for (int k = 0; k < SIZE; k += 64) /* no block handed out twice */
            CHECK(((char *)blocks[i])[k] == (char)i);
        fa_free(blocks[i]);
    }
    _fa_heap_check(_fa_heap_tls);
}

/* A thread fills pages, frees a few blocks of a full one (short of the point) and ends; the
 * main thread frees the rest. The page must not keep the ended thread's thread word, and its
 * frees from here on must take the remote way. */
static void *fill_and_leave(void *arg)
{
    (void)arg;
    for (int i = 0; i < COUNT; i++)
        blocks[i] = fa_malloc(SIZE);
    static int index[COUNT];
    int in_page = blocks_of_first_page(index);
    for (int k = 0; k < in_page / 32; k++) {
        fa_free(blocks[index[k]]);
        blocks[index[k]] = NULL;
    }
    _fa_heap_check(_fa_heap_tls);
    return NULL;
}

static void thread_ends_with_blocks_waiting(void)
{
    for (int round = 0; round < 3; round++) {
        fa_test_on_thread(fill_and_leave, NULL);
        for (int i = 0; i < COUNT; i++)
            fa_free(blocks[i]);
    }
    _fa_heap_check(_fa_heap_tls);
}

int main(int argc, char **argv)
{
    bool meshing = argc > 1 && strcmp(argv[1], "--mesh") == 0;
    if (meshing)
        CHECK_EQ(fa_option_get("mesh"), 1);
    comes_back_at_a_16th();
    scattered_frees_empty_full_pages();
    thread_ends_with_blocks_waiting();
    if (argc == 1) {
        const char *env[] = {"FITALLOC_MESH=1", NULL};
        char *args[] = {argv[0], (char *)"--mesh", NULL};
        fa_test_rerun("FITALLOC_MESH=1", env, args);
    }
    printf("full_return%s: ok (%s)\n", meshing ? " --mesh" : "",
           _fa_mesh_on ? "meshing on: back at the first free" : "back at a 16th");
    return 0;
}

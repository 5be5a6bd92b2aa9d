/* rss_breakdown: where a threaded program's resident memory is at its peak, under fitalloc.
 *
 *   cc -O2 -shared -fPIC -pthread -Iinclude -Isrc -o rss_breakdown.so \
 *      bench/support/rss_breakdown/rss_breakdown.c
 *   LD_PRELOAD="$PWD/rss_breakdown.so build/libfitalloc.so" program args...
 *
 * A thread of its own reads the process's RSS every millisecond; at each new high it sorts the
 * resident memory fitalloc holds (/proc/self/pagemap: run as root) by owner: the heap
 * structures, the segments' headers (their fields, page descriptors and page index), the
 * resident part of each page in use (with its blocks in use) and the rest of the segments (free
 * pages not purged yet). At exit it prints the breakdown of the highest sample to stderr; the
 * rest of the RSS is the program's, its stacks and the libraries. RSS_BREAKDOWN_PAGES=1 lists
 * the sample's pages too. Used for record 110; a sample, so exact only to a few pages.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "engine/types.h"
#include "fitalloc-stats.h"

#define MAX_PAGES 65536
#define MAX_HEAPS 4096
#define MAX_SEGS 4096

struct page_seen {
    uintptr_t start, owner;
    size_t size, block_size, used, resident_kib;
};
static struct page_seen pages[MAX_PAGES];
static size_t npages;
static uintptr_t heaps[MAX_HEAPS], segs[MAX_SEGS];
static size_t nheaps, nsegs;

struct breakdown {
    long rss_kib;
    size_t heaps, segs, pages;
    size_t heap_kib, header_kib, provisioned_kib, used_kib, other_seg_kib;
};
static struct breakdown best;
static struct page_seen best_pages[MAX_PAGES];
static size_t best_npages;
static volatile int stop;

static void visit(const struct fa_heap_area *a, void *arg)
{
    (void)arg;
    if (a->kind != FA_AREA_PAGE || npages >= MAX_PAGES)
        return;
    pages[npages++] =
        (struct page_seen){(uintptr_t)a->start, a->owner, a->size, a->block_size, a->used};
}

/* Pages present and not the kernel's shared zero page (what a read of untouched memory maps,
 * which RSS does not count): /proc/self/pagemap, whose frame numbers need root. */
static int pagemap = -1;
static uint64_t zero_pfn;

static uint64_t pfn_of(uintptr_t page)
{
    uint64_t e = 0;
    if (pread(pagemap, &e, sizeof e, (off_t)(page / 4096 * 8)) != sizeof e || !(e >> 63))
        return 0;
    return e & ((1ull << 55) - 1);
}

static size_t resident_kib(uintptr_t from, size_t len)
{
    uintptr_t lo = from & ~(uintptr_t)4095, hi = (from + len + 4095) & ~(uintptr_t)4095;
    size_t n = 0;
    for (uintptr_t p = lo; p < hi; p += 4096) {
        uint64_t pfn = pfn_of(p);
        n += pfn != 0 && pfn != zero_pfn;
    }
    return n * 4;
}

static void add_unique(uintptr_t *set, size_t *n, size_t max, uintptr_t v)
{
    for (size_t i = 0; i < *n; i++)
        if (set[i] == v)
            return;
    if (*n < max)
        set[(*n)++] = v;
}

static size_t header_end(size_t block_size)
{
    return block_size <= FA_SMALL_MAX    ? FA_SMALL_FIRST_PAGE
           : block_size <= FA_MEDIUM_MAX ? FA_MEDIUM_FIRST_PAGE
                                         : FA_BIG_FIRST_PAGE;
}

static void sample(long rss)
{
    npages = nheaps = nsegs = 0;
    fa_heap_visit(visit, NULL);
    struct breakdown b = {.rss_kib = rss, .pages = npages};
    size_t seg_total = 0;
    for (size_t i = 0; i < npages; i++) {
        if (pages[i].owner)
            add_unique(heaps, &nheaps, MAX_HEAPS, pages[i].owner);
        uintptr_t seg = pages[i].start & ~FA_SEG_MASK;
        size_t before = nsegs;
        add_unique(segs, &nsegs, MAX_SEGS, seg);
        if (nsegs != before) {
            b.header_kib += resident_kib(seg, header_end(pages[i].block_size));
            seg_total += resident_kib(seg, FA_SEG_SIZE);
        }
        pages[i].resident_kib = resident_kib(pages[i].start, pages[i].size);
        b.provisioned_kib += pages[i].resident_kib;
        b.used_kib += pages[i].used * pages[i].block_size / 1024;
    }
    for (size_t i = 0; i < nheaps; i++)
        b.heap_kib += resident_kib(heaps[i], sizeof(fa_heap_t));
    b.heaps = nheaps;
    b.segs = nsegs;
    b.other_seg_kib = seg_total - b.header_kib - b.provisioned_kib;
    best = b;
    memcpy(best_pages, pages, npages * sizeof pages[0]);
    best_npages = npages;
}

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, rss = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &size, &rss) != 2)
            rss = 0;
        fclose(f);
    }
    return rss * 4;
}

static void *watch(void *arg)
{
    (void)arg;
    struct timespec ms = {0, 1000000};
    while (!stop) {
        long rss = rss_kib();
        if (rss > best.rss_kib)
            sample(rss);
        nanosleep(&ms, NULL);
    }
    return NULL;
}

__attribute__((constructor)) static void start(void)
{
    pagemap = open("/proc/self/pagemap", O_RDONLY);
    static volatile char probe[2 * 4096] __attribute__((aligned(4096)));
    (void)probe[4096];
    zero_pfn = pfn_of((uintptr_t)&probe[4096]);
    /* Real-time priority where allowed: with more threads than cores, a plain sampler would
     * not run at the peak. */
    pthread_attr_t attr;
    struct sched_param prio = {.sched_priority = 1};
    pthread_attr_init(&attr);
    pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
    pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
    pthread_attr_setschedparam(&attr, &prio);
    pthread_t t;
    if (pthread_create(&t, &attr, watch, NULL) != 0)
        pthread_create(&t, NULL, watch, NULL);
    pthread_detach(t);
}

__attribute__((destructor)) static void report(void)
{
    stop = 1;
    fprintf(stderr,
            "rss_breakdown: peak sample %ld KiB: heaps %zu (%zu KiB resident, %zu B each), "
            "segments %zu (headers %zu KiB, rest not in pages in use %zu KiB), pages %zu "
            "(resident %zu KiB, blocks in use %zu KiB)\n",
            best.rss_kib, best.heaps, best.heap_kib, sizeof(fa_heap_t), best.segs, best.header_kib,
            best.other_seg_kib, best.pages, best.provisioned_kib, best.used_kib);
    /* RSS_BREAKDOWN_PAGES=1: every page of the peak sample, "block_size resident_kib used owner". */
    if (getenv("RSS_BREAKDOWN_PAGES"))
        for (size_t i = 0; i < best_npages; i++)
            fprintf(stderr, "page %zu %zu %zu %lx\n", best_pages[i].block_size,
                    best_pages[i].resident_kib, best_pages[i].used,
                    (unsigned long)best_pages[i].owner);
}

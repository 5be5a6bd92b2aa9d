/* The lab's statistics (struct fa_lab_stats, definitions in docs/lab.md): summed over the
 * heaps, the free-block size histogram, and the report printed at exit. Nothing here
 * allocates. */
#include <string.h>

#include "common/message.h"
#include "common/report.h"
#include "platform/arch.h"
#include "platform/compiler.h"
#include "platform/os.h"
#include "lab/threads/lab_instance.h"
#include "platform/atomic.h"

static void add_heap(fa_classic_heap *h, bool exclusive, fa_lab_lock_t *lock, void *arg)
{
    struct fa_lab_stats *out = arg;
    out->mallocs += FA_HEAP_READ(h, mallocs);
    out->frees += FA_HEAP_READ(h, frees);
    out->reuses += FA_HEAP_READ(h, reuses);
    out->grows += FA_HEAP_READ(h, grows);
    out->splits += FA_HEAP_READ(h, splits);
    out->coalesces += FA_HEAP_READ(h, coalesces);
    out->blocks += FA_HEAP_READ(h, blocks);
    out->requested += FA_HEAP_READ(h, requested);
    out->granted += FA_HEAP_READ(h, granted);
    for (unsigned k = 0; k < FA_LAB_SIZE_CLASSES; k++) {
        out->size_classes[k].mallocs += FA_HEAP_READ(h, class_mallocs[k]);
        out->size_classes[k].requested += FA_HEAP_READ(h, class_requested[k]);
        out->size_classes[k].granted += FA_HEAP_READ(h, class_granted[k]);
    }
    out->max_heap += FA_HEAP_READ(h, payload_grown);
    uint64_t free_blocks = FA_HEAP_READ(h, free_blocks);
    uint64_t free_size = FA_HEAP_READ(h, free_size);
    out->free_blocks += free_blocks;
    out->free_space_with_headers += free_size;
    out->free_bytes += free_size - free_blocks * FA_BLOCK_HEADER;
    out->heap_bytes += FA_HEAP_READ(h, heap_bytes);
    if (exclusive) {
        size_t largest = _fa_classic_heap_largest_free(h);
        if (largest > out->largest_free)
            out->largest_free = largest;
    }
    if (lock) {
        out->lock_acquisitions += lock->acquisitions;
        out->lock_contended += lock->contended;
        out->futex_waits += lock->futex_waits;
        out->futex_wakes += fa_atomic_load_relaxed(&lock->futex_wakes);
    }
    out->heaps++;
}

void _fa_lab_instance_stats(struct fa_lab *lab, struct fa_lab_stats *out)
{
    memset(out, 0, sizeof *out);
    out->size = sizeof *out;
    out->version = FA_LAB_STATS_VERSION;
    lab->ops->visit(lab, add_heap, out);
    if (out->heap_bytes)
        out->frag_free_over_heap = (double)out->free_space_with_headers / (double)out->heap_bytes;
    if (out->free_bytes)
        out->frag_largest_over_free = 1.0 - (double)out->largest_free / (double)out->free_bytes;
    if (out->requested)
        out->frag_granted_over_requested = (double)out->granted / (double)out->requested;
    fa_mutex_lock(&lab->direct.lock);
    out->direct_allocs = lab->direct.allocs;
    out->direct_frees = lab->direct.frees;
    out->direct_bytes = lab->direct.bytes;
    fa_mutex_unlock(&lab->direct.lock);
}

/* ---- histogram: 16-byte bins below 4 KiB, then one bin per power of two ---- */

unsigned _fa_lab_hist_bin_of(size_t payload)
{
    if (payload < FA_LAB_HIST_EXACT * 16)
        return (unsigned)(payload / 16);
    unsigned log2 = 63u - (unsigned)__builtin_clzll(payload); /* >= 12 */
    unsigned bin = FA_LAB_HIST_EXACT + log2 - 12;
    return bin < FA_LAB_HIST_BINS ? bin : FA_LAB_HIST_BINS - 1;
}

uint64_t _fa_lab_hist_bin_size(unsigned bin)
{
    if (bin < FA_LAB_HIST_EXACT)
        return (uint64_t)bin * 16;
    return (uint64_t)1 << (bin - FA_LAB_HIST_EXACT + 12);
}

static void count_free(size_t size, void *arg)
{
    uint64_t *bins = arg;
    bins[_fa_lab_hist_bin_of(size - FA_BLOCK_HEADER)]++;
}

static void hist_heap(fa_classic_heap *h, bool exclusive, fa_lab_lock_t *lock, void *arg)
{
    (void)lock;
    if (exclusive)
        _fa_classic_heap_foreach_free(h, count_free, arg);
}

void _fa_lab_instance_hist(struct fa_lab *lab, uint64_t bins[FA_LAB_HIST_BINS])
{
    memset(bins, 0, FA_LAB_HIST_BINS * sizeof bins[0]);
    lab->ops->visit(lab, hist_heap, bins);
}

/* Decimal digits of v at the end of buf; returns the first. */
static char *decimal(char *end, uint64_t v)
{
    do
        *--end = (char)('0' + v % 10);
    while (v /= 10);
    return end;
}

/* "size count" per bin: every 16-byte bin from 16 B, then the power-of-two bins up to the
 * last one in use. */
int _fa_lab_instance_hist_write_fd(struct fa_lab *lab, int fd)
{
    uint64_t bins[FA_LAB_HIST_BINS];
    _fa_lab_instance_hist(lab, bins);
    unsigned last = FA_LAB_HIST_EXACT - 1;
    for (unsigned b = FA_LAB_HIST_EXACT; b < FA_LAB_HIST_BINS; b++)
        if (bins[b])
            last = b;
    char buf[4096];
    size_t len = 0;
    for (unsigned b = 1; b <= last; b++) {
        char num[24], *end = num + sizeof num, *s;
        if (len + 2 * sizeof num > sizeof buf) {
            _fa_os_write(fd, buf, len);
            len = 0;
        }
        s = decimal(end, _fa_lab_hist_bin_size(b));
        memcpy(buf + len, s, (size_t)(end - s));
        len += (size_t)(end - s);
        buf[len++] = ' ';
        s = decimal(end, bins[b]);
        memcpy(buf + len, s, (size_t)(end - s));
        len += (size_t)(end - s);
        buf[len++] = '\n';
    }
    _fa_os_write(fd, buf, len);
    return 0;
}

/* ---- the report ---- */

/* v >= 0 with six decimals ("0.450000"), like printf's %f. */
static const char *fixed6(char *buf, size_t size, double v)
{
    uint64_t micro = (uint64_t)(v * 1e6 + 0.5);
    char *end = buf + size - 1, *s;
    *end = 0;
    s = end;
    for (int i = 0; i < 6; i++) {
        *--s = (char)('0' + micro % 10);
        micro /= 10;
    }
    *--s = '.';
    return decimal(s, micro);
}

const char *_fa_lab_policy_name(enum fa_policy policy)
{
    static const char *const names[] = {"first",      "next", "best",  "worst",
                                        "segregated", "tlsf", "buddy", "slab"};
    _Static_assert(sizeof names / sizeof names[0] == FA_POLICY_COUNT, "a name for each policy");
    return (unsigned)policy < FA_POLICY_COUNT ? names[policy] : "?";
}

/* The size classes that served a malloc: JSON objects, or text lines under a heading. */
static void print_classes(int fd, bool json, const struct fa_lab_stats *s)
{
    bool first = true;
    for (unsigned k = 0; k < FA_LAB_SIZE_CLASSES; k++) {
        uint64_t mallocs = s->size_classes[k].mallocs;
        if (!mallocs)
            continue;
        unsigned long long block = 1ull << k, requested = s->size_classes[k].requested,
                           granted = s->size_classes[k].granted;
        if (json)
            _fa_message(fd,
                        "%s{\"block\": %llu, \"mallocs\": %llu, \"requested\": %llu, "
                        "\"granted\": %llu}",
                        first ? "" : ", ", block, (unsigned long long)mallocs, requested, granted);
        else
            _fa_message(fd,
                        "%s    blocks from %llu bytes: %llu mallocs, %llu bytes requested, %llu "
                        "granted\n",
                        first ? "  by size class:\n" : "", block, (unsigned long long)mallocs,
                        requested, granted);
        first = false;
    }
}

void _fa_lab_instance_stats_print(struct fa_lab *lab, int fd, bool json)
{
    struct fa_lab_stats s;
    _fa_lab_instance_stats(lab, &s);
    const struct fa_report_row rows[] = {
        {"mallocs", "mallocs", s.mallocs, false},
        {"frees", "frees", s.frees, false},
        {"reuses", "reuses", s.reuses, false},
        {"grows", "grows", s.grows, false},
        {"splits", "splits", s.splits, false},
        {"coalesces", "coalesces", s.coalesces, false},
        {"blocks", "blocks", s.blocks, false},
        {"requested", "requested", s.requested, true},
        {"granted", "granted", s.granted, true},
        {"max heap (payloads, headers excluded)", "max_heap", s.max_heap, true},
        {"free blocks", "free_blocks", s.free_blocks, false},
        {"free bytes", "free_bytes", s.free_bytes, true},
        {"largest free", "largest_free", s.largest_free, true},
        {"average free block", "average_free_block",
         s.free_blocks ? s.free_bytes / s.free_blocks : 0, true},
        {"heap bytes (headers included)", "heap_bytes", s.heap_bytes, true},
        {"free space with headers", "free_space_with_headers", s.free_space_with_headers, true},
        {"direct allocs", "direct_allocs", s.direct_allocs, false},
        {"direct frees", "direct_frees", s.direct_frees, false},
        {"direct bytes", "direct_bytes", s.direct_bytes, true},
        {"lock acquisitions", "lock_acquisitions", s.lock_acquisitions, false},
        {"lock contended", "lock_contended", s.lock_contended, false},
        {"futex waits", "futex_waits", s.futex_waits, false},
        {"futex wakes", "futex_wakes", s.futex_wakes, false},
        {"heaps", "heaps", s.heaps, false},
    };
    const struct fa_lab_config *cfg = &lab->cfg;
    const char *policy = _fa_lab_policy_name(cfg->heap.policy);
    enum fa_index_kind kind = _fa_fit_index_kind(_fa_fit_policy(cfg->heap.policy), cfg->heap.index);
    const char *index = kind == FA_INDEX_TLSF           ? "tlsf"
                        : kind == FA_INDEX_BUDDY        ? "buddy"
                        : kind == FA_INDEX_SLAB         ? "slab"
                        : kind == FA_INDEX_ADDRESS_LIST ? "list"
                                                        : "tree";
    char frag1[40], frag2[40], frag3[40];
    const char *f1 = fixed6(frag1, sizeof frag1, s.frag_free_over_heap);
    const char *f2 = fixed6(frag2, sizeof frag2, s.frag_largest_over_free);
    const char *f3 = fixed6(frag3, sizeof frag3, s.frag_granted_over_requested);
    if (json) {
        _fa_message(fd,
                    "{\"fitalloc_lab\": {\"pid\": %d, \"policy\": \"%s\", \"index\": \"%s\", "
                    "\"lock\": \"%s\", \"coalesce\": %s, \"arena\": %llu",
                    _fa_os_pid(), policy, index, lab->ops->name,
                    cfg->heap.coalesce ? "true" : "false", (unsigned long long)cfg->heap.arena);
        _fa_report_rows(fd, true, rows, sizeof rows / sizeof rows[0]);
        _fa_message(fd,
                    ", \"frag_free_over_heap\": %s, \"frag_largest_over_free\": %s, "
                    "\"frag_granted_over_requested\": %s, \"size_classes\": [",
                    f1, f2, f3);
        print_classes(fd, true, &s);
        _fa_message(fd, "]}}\n");
        return;
    }
    _fa_message(fd, "fitalloc: lab statistics (pid %d; policy %s, index %s, lock %s, coalescing %s",
                _fa_os_pid(), policy, index, lab->ops->name, cfg->heap.coalesce ? "on" : "off");
    if (cfg->heap.arena)
        _fa_message(fd, ", arena %llu bytes", (unsigned long long)cfg->heap.arena);
    _fa_message(fd, ")\n");
    _fa_report_rows(fd, false, rows, sizeof rows / sizeof rows[0]);
    _fa_message(fd, "  fragmentation (free/heap): %s\n", f1);
    _fa_message(fd, "  fragmentation (1 - largest/free): %s\n", f2);
    _fa_message(fd, "  internal fragmentation (granted/requested): %s\n", f3);
    print_classes(fd, false, &s);
}

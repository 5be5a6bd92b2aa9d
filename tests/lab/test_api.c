/* The process-wide lab through the core's entry points (src/lab/lab.h) and the public API
 * (fitalloc-lab.h): options in, C semantics out (malloc(0), realloc in place, aligned blocks,
 * direct mappings), statistics, the histogram file, the report (text and JSON), the checker and
 * fork. The test sets the options itself and calls the entry points directly, so it runs the
 * same whether or not malloc is fitalloc's (sanitizer builds). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lab/lab.h"
#include "common/options.h"
#include "check.h"
#include "fitalloc-lab.h"

static struct fa_lab_stats stats(void)
{
    struct fa_lab_stats s;
    s.size = sizeof s;
    CHECK_EQ(fa_lab_stats_get(&s), 0);
    CHECK_EQ(s.version, FA_LAB_STATS_VERSION);
    return s;
}

/* Everything `fn(fd)` writes, in a static buffer. */
static const char *capture(void (*fn)(int fd, bool json), bool json)
{
    static char buf[16384];
    char path[] = "/tmp/fitalloc-lab-api-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    unlink(path);
    fn(fd, json);
    CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
    ssize_t n = read(fd, buf, sizeof buf - 1);
    CHECK(n > 0);
    buf[n] = 0;
    close(fd);
    return buf;
}

static unsigned long long text_value(const char *report, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "\n  %s: ", name);
    const char *at = strstr(report, key);
    CHECK_MSG(at != NULL, "no line \"%s\" in the report:\n%s", name, report);
    return strtoull(at + strlen(key), NULL, 10);
}

static void test_before_init(void)
{
    struct fa_lab_stats s;
    s.size = sizeof s;
    CHECK_EQ(fa_lab_stats_get(&s), -1);
    CHECK_EQ(fa_lab_check(), -1);
    CHECK_EQ(fa_lab_hist_write("/dev/null"), -1);
    int x;
    CHECK(!_fa_lab_owns(&x));
}

static void test_semantics(void)
{
    void *a = _fa_lab_malloc(0), *b = _fa_lab_malloc(0);
    CHECK(a && b && a != b);
    CHECK(_fa_lab_owns(a));
    CHECK_GE(_fa_lab_usable_size(a), 16);
    _fa_lab_free(a, "free");
    _fa_lab_free(b, "free");

    /* realloc grows in place into a free next neighbour, and keeps the contents. */
    char *p = _fa_lab_malloc(100);
    void *q = _fa_lab_malloc(100);
    void *guard = _fa_lab_malloc(1);
    memset(p, 'x', 100);
    _fa_lab_free(q, "free");
    CHECK(_fa_lab_realloc(p, 200) == p);
    CHECK_BYTES(p, 100, 'x');
    /* ... and moves when it cannot. */
    char *r = _fa_lab_realloc(p, 5000);
    CHECK(r != NULL && r != p);
    CHECK_BYTES(r, 100, 'x');
    _fa_lab_free(r, "free");
    _fa_lab_free(guard, "free");

    for (size_t align = 32; align <= 65536; align *= 4) {
        void *x = _fa_lab_aligned(align, 1000);
        CHECK(x != NULL);
        CHECK_ALIGNED(x, align);
        CHECK_GE(_fa_lab_usable_size(x), 1000);
        _fa_lab_free(x, "free");
    }

    /* FITALLOC_LAB_DIRECT=1M: a mapping of its own, counted apart. */
    struct fa_lab_stats before = stats();
    char *big = _fa_lab_malloc(3 << 20);
    CHECK(big != NULL && _fa_lab_owns(big));
    CHECK_GE(_fa_lab_usable_size(big), 3 << 20);
    memset(big, 7, 3 << 20);
    big = _fa_lab_realloc(big, 5 << 20);
    CHECK_BYTES(big, 3 << 20, 7);
    struct fa_lab_stats s = stats();
    CHECK_EQ(s.direct_allocs, before.direct_allocs + 2);
    CHECK_EQ(s.direct_frees, before.direct_frees + 1);
    CHECK_GE(s.direct_bytes, 5 << 20);
    CHECK_EQ(s.mallocs, before.mallocs);
    _fa_lab_free(big, "free");
    CHECK(!_fa_lab_owns(big));
    CHECK_EQ(stats().direct_bytes, 0);
    CHECK_EQ(fa_lab_check(), 0);
}

/* Five 128-byte holes between used blocks, then the statistics and histogram they give. */
static void test_stats_and_hist(void)
{
    void *hole[5], *guard[5];
    for (int i = 0; i < 5; i++) {
        hole[i] = _fa_lab_malloc(128);
        guard[i] = _fa_lab_malloc(128);
    }
    for (int i = 0; i < 5; i++)
        _fa_lab_free(hole[i], "free");
    struct fa_lab_stats s = stats();
    CHECK_GE(s.free_blocks, 5);
    CHECK_EQ(s.free_space_with_headers, s.free_bytes + 16 * s.free_blocks);
    CHECK(s.frag_free_over_heap > 0 && s.frag_free_over_heap < 1);
    CHECK_EQ(s.heaps, 1);
    CHECK_EQ(s.lock_contended, 0);
    CHECK_GE(s.lock_acquisitions, s.mallocs + s.frees);

    char path[] = "/tmp/fitalloc-lab-hist-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    CHECK_EQ(fa_lab_hist_write(path), 0);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    unsigned long long size, count, total = 0, prev = 0, lines = 0, at128 = 0;
    while (fscanf(f, "%llu %llu", &size, &count) == 2) {
        CHECK_GT(size, prev); /* ascending */
        if (size <= 4080)
            CHECK_EQ(size, 16 * (lines + 1)); /* every 16-byte bin, from 16 */
        else
            CHECK_EQ(size & (size - 1), 0); /* then powers of two */
        if (size == 128)
            at128 = count;
        total += count;
        prev = size;
        lines++;
    }
    fclose(f);
    unlink(path);
    CHECK_GE(lines, 255);
    CHECK_GE(at128, 5);
    CHECK_EQ(total, s.free_blocks);

    const char *text = capture(_fa_lab_stats_print, false);
    CHECK(strstr(text, "fitalloc: lab statistics") == text);
    CHECK(strstr(text, "policy first, index tree, lock global") != NULL);
    s = stats();
    CHECK_EQ(text_value(text, "mallocs"), s.mallocs);
    CHECK_EQ(text_value(text, "frees"), s.frees);
    CHECK_EQ(text_value(text, "free blocks"), s.free_blocks);
    /* Both heap sizes say what they count: max heap is under heap bytes by the headers. */
    CHECK_EQ(text_value(text, "max heap (payloads, headers excluded)"), s.max_heap);
    CHECK_EQ(text_value(text, "heap bytes (headers included)"), s.heap_bytes);
    CHECK(s.max_heap < s.heap_bytes);
    CHECK(strstr(text, "\n  fragmentation (free/heap): 0.") != NULL);
    CHECK(strstr(text, "\n  internal fragmentation (granted/requested): 1.") != NULL);
    CHECK(strstr(text, "\n  by size class:\n    blocks from ") != NULL);
    CHECK_GE(s.granted, s.requested);
    const char *json = capture(_fa_lab_stats_print, true);
    CHECK(strstr(json, "{\"fitalloc_lab\": {") == json);
    char key[64];
    snprintf(key, sizeof key, "\"mallocs\": %llu,", (unsigned long long)s.mallocs);
    CHECK_MSG(strstr(json, key) != NULL, "no %s in %s", key, json);
    CHECK(strstr(json, "\"frag_largest_over_free\": 0.") != NULL);
    CHECK(strstr(json, "\"frag_granted_over_requested\": 1.") != NULL);
    CHECK(strstr(json, "\"size_classes\": [{\"block\": ") != NULL);
    CHECK(json[strlen(json) - 1] == '\n');

    for (int i = 0; i < 5; i++)
        _fa_lab_free(guard[i], "free");
    s = stats();
    CHECK_EQ(s.mallocs, s.frees);
    CHECK_EQ(fa_lab_check(), 0);
    s.size = sizeof s - 1;
    CHECK_EQ(fa_lab_stats_get(&s), -1);
}

static void test_fork(void)
{
    void *kept = _fa_lab_malloc(1000);
    _fa_lab_fork_prepare();
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        _fa_lab_fork_child();
        void *p = _fa_lab_malloc(5000);
        if (!p || fa_lab_check() != 0)
            _exit(1);
        _fa_lab_free(p, "free");
        _fa_lab_free(kept, "free");
        _exit(fa_lab_check() == 0 ? 0 : 2);
    }
    _fa_lab_fork_parent();
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    _fa_lab_free(kept, "free");
    _fa_lab_thread_exit();
}

int main(void)
{
    test_before_init();
    _fa_option_values[FA_OPTION_mode] = FA_MODE_LAB;
    _fa_option_values[FA_OPTION_policy] = FA_POLICY_FIRST;
    _fa_option_values[FA_OPTION_lab_index] = FA_LAB_INDEX_TREE;
    _fa_option_values[FA_OPTION_lock] = FA_LOCK_GLOBAL;
    _fa_option_values[FA_OPTION_lab_direct] = 1 << 20;
    _fa_lab_init();
    _fa_lab_init(); /* once only */
    test_semantics();
    test_stats_and_hist();
    test_fork();
    printf("lab/api: ok\n");
    return 0;
}

/* A default-mode program, for test_hot_text.sh and tools/hot-text.sh: the calls a program makes
 * of the allocator (every range of sizes, calloc, realloc, the aligned forms, a large block, a
 * thread whose blocks the main thread frees, a fork whose child allocates), under LD_PRELOAD.
 *
 *   hot_text                 the calls only
 *   hot_text <end> <rodata>  then checks that no page of libfitalloc's code is resident beyond
 *                            what faults before the file offset <end> map (the end of its
 *                            default-mode code, cmake/hot-text.cmake), and that no page of the
 *                            segment that holds the file offset <rodata> (.rodata, .eh_frame)
 *                            is resident at all (platform/compiler.h, FA_STARTUP_CONST): one
 *                            line per page that is, exit status 1 if any
 *
 * A read fault in a file mapping maps the 64 KiB around the page too ("fault around"): from the
 * window's 64 KiB-aligned start, or from the mapping's start if that is later, 64 KiB on. So
 * faults before `end` map nothing at or beyond max(end - 1 aligned down, mapping's start)
 * + 64 KiB; a page resident there means code beyond `end` ran.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define WINDOW (64u << 10)

static void *volatile sink;

static void calls(void)
{
    enum { N = 256 };
    static void *blocks[N];
    for (size_t size = 1, i = 0; size <= (1u << 20); size += size / 4 + 1, i = (i + 1) % N) {
        free(blocks[i]);
        blocks[i] = malloc(size);
        memset(blocks[i], 1, size < 64 ? size : 64);
    }
    for (size_t i = 0; i < N; i++) {
        blocks[i] = realloc(blocks[i], 24 + i * 40);
        sink = blocks[i];
    }
    for (size_t i = 0; i < N; i += 2) {
        free(blocks[i]);
        blocks[i] = calloc(i + 1, 16);
    }
    void *p = NULL;
    if (posix_memalign(&p, 64, 200) == 0)
        free(p);
    free(aligned_alloc(4096, 8192));
    free(memalign(256, 100));
    sink = malloc(100);
    sink = (void *)malloc_usable_size(sink);
    free(strdup("fitalloc"));
    void *big = malloc(8u << 20);
    memset(big, 1, 4096);
    big = realloc(big, 12u << 20);
    free(big);
    for (size_t i = 0; i < N; i++) {
        free(blocks[i]);
        blocks[i] = NULL;
    }
}

static void *thread_main(void *arg)
{
    (void)arg;
    void **blocks = malloc(64 * sizeof *blocks);
    for (int i = 0; i < 64; i++)
        blocks[i] = malloc(16 + 8 * (size_t)i);
    return blocks;
}

static void threads_and_fork(void)
{
    pthread_t t;
    void *result;
    if (pthread_create(&t, NULL, thread_main, NULL) != 0 || pthread_join(t, &result) != 0)
        exit(2);
    void **blocks = result;
    for (int i = 0; i < 64; i++)
        free(blocks[i]); /* another thread's blocks */
    free(blocks);
    pid_t child = fork();
    if (child == 0) {
        free(malloc(50));
        _exit(0);
    }
    int status;
    if (child < 0 || waitpid(child, &status, 0) != child || status != 0)
        exit(2);
}

/* The resident pages of libfitalloc's code beyond what faults before `end` map, and those of
 * its read-only segment that holds `rodata`. */
static int check(uintptr_t end, uintptr_t rodata)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    int pagemap = open("/proc/self/pagemap", O_RDONLY);
    if (!maps || pagemap < 0)
        return 2;
    char line[512];
    int outside = 0, found = 0;
    while (fgets(line, sizeof line, maps)) {
        uintptr_t lo, hi, offset;
        char perms[8], path[300] = "";
        if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %299s", &lo, &hi, perms, &offset, path) < 4 ||
            !strstr(path, "libfitalloc"))
            continue;
        uintptr_t from;
        if (strcmp(perms, "r-xp") == 0) {
            found |= 1;
            uintptr_t last = (lo + (end - offset) - 1) & ~(uintptr_t)(WINDOW - 1);
            from = (last > lo ? last : lo) + WINDOW;
        } else if (strcmp(perms, "r--p") == 0 && rodata - offset < hi - lo) {
            found |= 2;
            from = lo;
        } else {
            continue;
        }
        for (uintptr_t page = from; page < hi; page += 4096) {
            uint64_t entry;
            if (pread(pagemap, &entry, sizeof entry, (off_t)(page / 4096 * 8)) != sizeof entry)
                return 2;
            if (!(entry >> 63))
                continue;
            printf("resident: %s page at offset %#lx\n", perms[2] == 'x' ? "code" : "read-only",
                   (unsigned long)(page - lo + offset));
            outside++;
        }
    }
    fclose(maps);
    close(pagemap);
    if (found != 3)
        return 2;
    return outside ? 1 : 0;
}

int main(int argc, char **argv)
{
    calls();
    threads_and_fork();
    calls();
    if (argc == 3)
        return check(strtoul(argv[1], NULL, 0), strtoul(argv[2], NULL, 0));
    return 0;
}

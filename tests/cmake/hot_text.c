/* A default-mode program, for test_hot_text.sh and tools/hot-text.sh: the calls a program makes
 * of the allocator (every range of sizes, calloc, realloc, the aligned forms, a large block, a
 * thread whose blocks the main thread frees, a fork whose child allocates), under LD_PRELOAD.
 *
 *   hot_text                 the calls only
 *   hot_text <end> <rodata>  the calls with libfitalloc's code from the first page after the
 *                            file offset <end> on (beyond its default-mode code, the rest of
 *                            the code in a mapping of its own: cmake/hot-text.cmake) and its
 *                            read-only segments from there to the one that holds the file
 *                            offset <rodata> (.eh_frame, .rodata: platform/compiler.h,
 *                            FA_STARTUP_CONST) made inaccessible: a call or a read there
 *                            prints its offset and ends the program with status 1
 *   hot_text <end> <rodata> <from> <to>
 *                            the same but for the segments at file offsets [from, to), left
 *                            accessible (the heap profiler's, for a profiled run)
 *
 * Made inaccessible, not looked at afterwards: which pages a fault maps around the one it needs
 * depends on the kernel (64 KiB windows, whole large folios of the page cache), what runs does
 * not.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* The ranges made inaccessible, and the file offsets they start at. */
static struct fence {
    uintptr_t lo, hi, offset;
    const char *what;
} fences[8];

static void put(const char *text)
{
    if (write(1, text, strlen(text)) < 0)
        _exit(3);
}

static void on_fault(int sig, siginfo_t *info, void *context)
{
    (void)sig, (void)context;
    uintptr_t at = (uintptr_t)info->si_addr;
    put("libfitalloc: ");
    for (int i = 0; i < 8; i++) {
        if (at - fences[i].lo < fences[i].hi - fences[i].lo) {
            char text[64];
            snprintf(text, sizeof text, "%s at file offset %#lx\n", fences[i].what,
                     (unsigned long)(at - fences[i].lo + fences[i].offset));
            put(text);
            _exit(1);
        }
    }
    put("a fault elsewhere\n");
    _exit(3);
}

/* Makes libfitalloc's code from the page after the file offset `end` on (its default-mode
 * code's mapping past it, the mapping of the rest) and its read-only segments from there to the
 * one that holds the file offset `rodata` (not .data.rel.ro's, after it) inaccessible, but for
 * the segments at offsets [keep_from, keep_to). */
static int fence(uintptr_t end, uintptr_t rodata, uintptr_t keep_from, uintptr_t keep_to)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    if (!maps)
        return 2;
    char line[512];
    int found = 0, data = 0;
    while (fgets(line, sizeof line, maps) && found < 8) {
        uintptr_t lo, hi, offset;
        char perms[8], path[300] = "";
        if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %299s", &lo, &hi, perms, &offset, path) < 4 ||
            !strstr(path, "libfitalloc") || offset - keep_from < keep_to - keep_from)
            continue;
        if (strcmp(perms, "r-xp") == 0 && end - offset < hi - lo) {
            uintptr_t from = (lo + (end - offset) + 4095) & ~(uintptr_t)4095;
            fences[found++] = (struct fence){from, hi, from - lo + offset, "code run"};
        } else if (strcmp(perms, "r-xp") == 0 && offset > end) {
            fences[found++] = (struct fence){lo, hi, offset, "code run"};
        } else if (strcmp(perms, "r--p") == 0 && offset > end && offset <= rodata) {
            fences[found++] = (struct fence){lo, hi, offset, "read-only data read"};
            data |= rodata - offset < hi - lo;
        }
    }
    fclose(maps);
    if (found < 2 || !data)
        return 2;
    struct sigaction action = {.sa_sigaction = on_fault, .sa_flags = SA_SIGINFO};
    sigaction(SIGSEGV, &action, NULL);
    for (int i = 0; i < found; i++)
        if (fences[i].hi > fences[i].lo &&
            mprotect((void *)fences[i].lo, fences[i].hi - fences[i].lo, PROT_NONE) != 0)
            return 2;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 || argc == 5) {
        int status = fence(strtoul(argv[1], NULL, 0), strtoul(argv[2], NULL, 0),
                           argc == 5 ? strtoul(argv[3], NULL, 0) : 0,
                           argc == 5 ? strtoul(argv[4], NULL, 0) : 0);
        if (status != 0)
            return status;
    }
    calls();
    threads_and_fork();
    calls();
    return 0;
}

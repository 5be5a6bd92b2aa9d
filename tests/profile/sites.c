/* The acceptance program of the heap profiler (issue 41): four call sites whose bytes are
 * known, for test_sites.sh to read back through google-pprof.
 *
 *   keep_large:  64 MiB in 64 KiB blocks, live at the peak, freed before exit
 *   keep_small:   8 MiB in 64-byte blocks, live at the peak, freed before exit
 *   leak_pages:   4 MiB in 4 KiB blocks, never freed: the exit profile
 *   churn:       CHURN_MIB MiB in 1 KiB blocks allocated and freed, at most 1 MiB live
 *
 * usage: sites [plain|threads|fork] CHURN_MIB
 *   threads: each site on a thread of its own (4 threads), the peak reached with all four live
 *   fork:    the sites run in a child, which writes its own files; the parent allocates nothing
 *            of them and waits */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MIB ((size_t)1 << 20)

static size_t churn_mib;
static void *large[1024], *small[131072];
static pthread_barrier_t peak_reached, may_free;
static int threaded;

static void *must(void *p)
{
    if (!p) {
        perror("sites: malloc");
        exit(1);
    }
    memset(p, 1, 64); /* touched, as a program would */
    return p;
}

/* With threads, every site keeps its blocks until all four have reached their peak. */
static void wait_peak(void)
{
    if (threaded) {
        pthread_barrier_wait(&peak_reached);
        pthread_barrier_wait(&may_free);
    }
}

__attribute__((noinline)) static void *keep_large(void *arg)
{
    for (size_t i = 0; i < 1024; i++)
        large[i] = must(malloc(64 << 10));
    wait_peak();
    return arg;
}

__attribute__((noinline)) static void *keep_small(void *arg)
{
    for (size_t i = 0; i < 131072; i++)
        small[i] = must(malloc(64));
    wait_peak();
    return arg;
}

__attribute__((noinline)) static void *leak_pages(void *arg)
{
    for (size_t i = 0; i < 1024; i++)
        must(malloc(4096));
    wait_peak();
    return arg;
}

__attribute__((noinline)) static void *churn(void *arg)
{
    static __thread void *ring[1024]; /* 1 MiB live at most */
    size_t blocks = churn_mib * 1024;
    for (size_t i = 0; i < blocks; i++) {
        free(ring[i % 1024]);
        ring[i % 1024] = must(malloc(1024));
    }
    wait_peak();
    for (size_t i = 0; i < 1024; i++)
        free(ring[i]);
    return arg;
}

static void free_kept(void)
{
    for (size_t i = 0; i < 1024; i++)
        free(large[i]);
    for (size_t i = 0; i < 131072; i++)
        free(small[i]);
}

static void run_sites(void)
{
    if (!threaded) {
        keep_large(NULL);
        keep_small(NULL);
        leak_pages(NULL);
        churn(NULL);
        free_kept();
        return;
    }
    void *(*sites[4])(void *) = {keep_large, keep_small, leak_pages, churn};
    pthread_t threads[4];
    pthread_barrier_init(&peak_reached, NULL, 5);
    pthread_barrier_init(&may_free, NULL, 5);
    for (int i = 0; i < 4; i++)
        if (pthread_create(&threads[i], NULL, sites[i], NULL)) {
            perror("sites: pthread_create");
            exit(1);
        }
    pthread_barrier_wait(&peak_reached);
    pthread_barrier_wait(&may_free);
    for (int i = 0; i < 4; i++)
        pthread_join(threads[i], NULL);
    free_kept();
}

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "plain";
    churn_mib = argc > 2 ? strtoul(argv[2], NULL, 10) : 1024;
    threaded = !strcmp(how, "threads");
    if (strcmp(how, "fork")) {
        run_sites();
        return 0;
    }
    pid_t child = fork();
    if (child < 0) {
        perror("sites: fork");
        return 1;
    }
    if (child == 0) {
        run_sites();
        exit(0);
    }
    int status;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status)) {
        fprintf(stderr, "sites: the child failed\n");
        return 1;
    }
    printf("child %d\n", (int)child);
    return 0;
}

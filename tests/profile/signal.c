/* FITALLOC_PROFILE_SIGNAL while threads allocate: 4 threads keep 1,000 blocks each and go on
 * freeing and allocating them until told to stop; once all hold their blocks, main sends
 * itself the signal, waits for the file it asks for (PREFIX.<pid>.1.heap, then .2.heap), and
 * exits 0 once both are there (1 after 20 s). */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static volatile int stop;
static pthread_barrier_t holding;

__attribute__((noinline)) static void *worker(void *arg)
{
    void *kept[1000];
    for (int i = 0; i < 1000; i++)
        kept[i] = malloc(64 + i % 512);
    pthread_barrier_wait(&holding);
    for (unsigned i = 0; !stop; i++) {
        free(kept[i % 1000]);
        kept[i % 1000] = malloc(64 + i % 512);
    }
    for (int i = 0; i < 1000; i++)
        free(kept[i]);
    return arg;
}

static int wait_for(const char *prefix, int n)
{
    char path[4200];
    snprintf(path, sizeof path, "%s.%d.%d.heap", prefix, (int)getpid(), n);
    struct stat st;
    for (int tries = 0; tries < 2000; tries++) {
        if (stat(path, &st) == 0 && st.st_size > 0)
            return 0;
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    fprintf(stderr, "signal: %s was not written\n", path);
    return 1;
}

int main(void)
{
    const char *prefix = getenv("FITALLOC_PROFILE");
    pthread_t threads[4];
    pthread_barrier_init(&holding, NULL, 5);
    for (int i = 0; i < 4; i++)
        pthread_create(&threads[i], NULL, worker, NULL);
    pthread_barrier_wait(&holding);
    int failed = 0;
    for (int n = 1; n <= 2 && !failed; n++) {
        kill(getpid(), SIGUSR2);
        failed = wait_for(prefix, n);
    }
    stop = 1;
    for (int i = 0; i < 4; i++)
        pthread_join(threads[i], NULL);
    return failed;
}

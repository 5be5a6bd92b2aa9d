/* The program of test_threads.sh: 4 threads allocate (malloc, calloc, realloc, aligned_alloc)
 * and free blocks of random sizes, and hand every 8th block to the next thread, which frees it.
 * Each thread logs its own calls ("op size align_log2 in out") in static memory; after joining
 * them, main prints the logs ("thread N" before each) and leaves with _exit(0): no exit
 * handler runs, so what the trace holds of the threads was written at their exit. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define THREADS 4
#define STEPS 3000
#define SLOTS 64
#define MAILBOX 256

enum { MALLOC = 1, CALLOC, REALLOC, ALIGNED, FREE };

struct call {
    int op;
    size_t size;
    int align_log2;
    uintptr_t in, out;
};
static struct call logs[THREADS][STEPS * 2];
static int counts[THREADS];

static pthread_mutex_t mail_lock = PTHREAD_MUTEX_INITIALIZER;
static void *mail[THREADS][MAILBOX];
static int mail_count[THREADS];

static void log_call(int t, int op, size_t size, int align_log2, const void *in, const void *out)
{
    logs[t][counts[t]++] = (struct call){op, size, align_log2, (uintptr_t)in, (uintptr_t)out};
}

static uint64_t next_random(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

static void free_logged(int t, void *p)
{
    free(p);
    log_call(t, FREE, 0, 0, p, NULL);
}

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    uint64_t rng = 0x9e3779b97f4a7c15ull * (uint64_t)(t + 1);
    void *slots[SLOTS] = {0};
    for (int step = 0; step < STEPS; step++) {
        /* Blocks other threads handed over are freed here. */
        if (step % 16 == 0) {
            void *got[MAILBOX];
            int n;
            pthread_mutex_lock(&mail_lock);
            n = mail_count[t];
            for (int i = 0; i < n; i++)
                got[i] = mail[t][i];
            mail_count[t] = 0;
            pthread_mutex_unlock(&mail_lock);
            for (int i = 0; i < n; i++)
                free_logged(t, got[i]);
        }
        uint64_t r = next_random(&rng);
        int slot = (int)(r % SLOTS);
        size_t size = 1 + (r >> 8) % 2000;
        void *old = slots[slot];
        void *p;
        switch ((r >> 24) % 4) {
        case 0:
            p = malloc(size);
            log_call(t, MALLOC, size, 0, NULL, p);
            break;
        case 1:
            p = calloc(1, size);
            log_call(t, CALLOC, size, 0, NULL, p);
            break;
        case 2:
            p = aligned_alloc(64, size);
            log_call(t, ALIGNED, size, 6, NULL, p);
            break;
        default:
            p = realloc(old, size);
            log_call(t, REALLOC, size, 0, old, p);
            slots[slot] = p;
            continue;
        }
        if (old)
            free_logged(t, old);
        slots[slot] = p;
        if (step % 8 == 0) { /* hand it to the next thread */
            int to = (t + 1) % THREADS;
            pthread_mutex_lock(&mail_lock);
            int fits = mail_count[to] < MAILBOX;
            if (fits)
                mail[to][mail_count[to]++] = p;
            pthread_mutex_unlock(&mail_lock);
            if (fits)
                slots[slot] = NULL;
        }
    }
    for (int i = 0; i < SLOTS; i++)
        if (slots[i])
            free_logged(t, slots[i]);
    return NULL;
}

int main(void)
{
    pthread_t threads[THREADS];
    for (int t = 0; t < THREADS; t++)
        if (pthread_create(&threads[t], NULL, worker, (void *)(intptr_t)t) != 0)
            return 2;
    for (int t = 0; t < THREADS; t++)
        pthread_join(threads[t], NULL);
    for (int t = 0; t < THREADS; t++) {
        printf("thread %d\n", t);
        for (int i = 0; i < counts[t]; i++)
            printf("%d %zu %d %llu %llu\n", logs[t][i].op, logs[t][i].size, logs[t][i].align_log2,
                   (unsigned long long)logs[t][i].in, (unsigned long long)logs[t][i].out);
    }
    fflush(stdout);
    _exit(0);
}

/* ctest labels: unit threads */
/* The heap profiler's stack walk (platform/stack_walk.c, eh_frame.c) through code built
 * without frame pointers: every frame of a known chain of calls is found, in order, through
 * a frame that keeps its CFA in rsp and one that keeps it in rbp (a variable-length array),
 * by four threads at once sharing the table of steps; a stack longer than asked for says so,
 * and a whole stack ends at the thread's first frame. A walk from the same place as the last
 * one is taken from the thread's memo of it only if the stack above is the same: the same
 * chain under two callers whose frames lie at the same addresses gives each its own caller. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "platform/os.h"

#define DEPTH 64

struct walked {
    uintptr_t frames[DEPTH];
    size_t count;
    bool truncated;
    uintptr_t into[3]; /* the return addresses into chain_a, chain_b, chain_c */
};

static volatile size_t vla_length = 40;

__attribute__((noinline)) static void chain_c(struct walked *w)
{
    w->into[1] = (uintptr_t)__builtin_return_address(0); /* into chain_b */
    w->count = _fa_os_stack(w->frames, DEPTH, &w->truncated);
    __asm__ volatile("" ::: "memory"); /* no tail call: chain_c's frame stays */
}

/* Its CFA is rbp-based: the array's length is known only at run time. */
__attribute__((noinline)) static void chain_b(struct walked *w)
{
    volatile char room[vla_length];
    room[0] = 1;
    w->into[0] = (uintptr_t)__builtin_return_address(0); /* into chain_a */
    chain_c(w);
    room[1] = room[0];
}

/* Its CFA is rsp-based, rsp moved by its array. */
__attribute__((noinline)) static void chain_a(struct walked *w)
{
    volatile uintptr_t spill[8] = {1};
    w->into[2] = (uintptr_t)__builtin_return_address(0); /* into the caller */
    chain_b(w);
    spill[1] = spill[0];
}

static void check_chain(const struct walked *w)
{
    /* frames[0] is in chain_c, after its call of the walk */
    CHECK(w->count >= 5);
    CHECK(w->frames[1] == w->into[1]);
    CHECK(w->frames[2] == w->into[0]);
    CHECK(w->frames[3] == w->into[2]);
    CHECK(!w->truncated);
}

/* Two callers of chain_a alike, called from one place: the walks under them start from the
 * same stack pointer and differ only in the return address into them. */
__attribute__((noinline)) static void via_x(struct walked *w)
{
    chain_a(w);
    __asm__ volatile("" ::: "memory"); /* no tail call */
}
static volatile int via_y_calls; /* via_y's code differs, or gcc folds the two into one */
__attribute__((noinline)) static void via_y(struct walked *w)
{
    via_y_calls++;
    chain_a(w);
    __asm__ volatile("" ::: "memory");
}

static void check_callers(void)
{
    void (*volatile callers[2])(struct walked *) = {via_x, via_y};
    uintptr_t into_via[2] = {0, 0}; /* frames[3]: the return address into via_x, via_y */
    for (int i = 0; i < 8; i++) {
        struct walked w;
        memset(&w, 0, sizeof w);
        callers[i & 1](&w);
        check_chain(&w);
        if (!into_via[i & 1])
            into_via[i & 1] = w.frames[3];
        CHECK(w.frames[3] == into_via[i & 1]);
    }
    CHECK(into_via[0] != into_via[1]);
}

static void *walker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 2000; i++) {
        struct walked w;
        memset(&w, 0, sizeof w);
        chain_a(&w);
        check_chain(&w);
    }
    return NULL;
}

int main(void)
{
#if !defined(__x86_64__)
    puts("platform/stack_walk: skipped (the table walk is x86-64's; elsewhere libgcc's unwinder)");
    return 77;
#endif
    struct walked w;
    memset(&w, 0, sizeof w);
    chain_a(&w);
    check_chain(&w);

    check_callers();

    uintptr_t few[2];
    bool truncated = false;
    CHECK(_fa_os_stack(few, 2, &truncated) == 2);
    CHECK(truncated);

    pthread_t threads[4];
    for (int i = 0; i < 4; i++)
        CHECK(pthread_create(&threads[i], NULL, walker, NULL) == 0);
    for (int i = 0; i < 4; i++)
        CHECK(pthread_join(threads[i], NULL) == 0);
    return 0;
}

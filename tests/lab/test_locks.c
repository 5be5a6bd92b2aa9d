/* Deterministic checks of the lock modes and their statistics:
 *   global  one lock acquisition per malloc and per free; a thread that finds the lock taken
 *           sleeps in the kernel and is woken by the unlock (contended, futex wait and wake);
 *   arenas  a thread moves to another arena when its own is locked (trylock), and a block
 *           goes back to the arena it came from;
 *   thread  a block freed by another thread waits on its heap's remote list until the owner
 *           allocates again; an exited thread's heap is adopted by the next new thread. */
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <string.h>

#include "lab/threads/lab_instance.h"
#include "check.h"
#include "lab_test.h"

static struct fa_lab *make_lab(enum fa_lock_mode lock, unsigned arenas)
{
    struct fa_lab_config cfg = {
        .heap = {.policy = FA_POLICY_BEST, .index = FA_LAB_INDEX_TREE, .coalesce = true},
        .lock = lock,
        .arenas = arenas,
        .slot_size = (size_t)64 << 20,
        .max_heaps = 4,
    };
    return lab_test_lab(&cfg);
}

static struct fa_lab_stats stats(struct fa_lab *lab)
{
    struct fa_lab_stats s;
    _fa_lab_instance_stats(lab, &s);
    return s;
}

static bool in_slot(struct fa_lab *lab, unsigned slot, const void *p)
{
    uintptr_t start = (uintptr_t)fa_lab_slot_heap(lab, slot);
    return (uintptr_t)p >= start && (uintptr_t)p < start + lab->slot_size;
}

/* ---- global: uncontended counts ---- */

static void test_global_counts(void)
{
    struct fa_lab *lab = make_lab(FA_LOCK_GLOBAL, 0);
    enum { N = 1000 };
    static void *p[N];
    for (int i = 0; i < N; i++)
        CHECK((p[i] = _fa_lab_instance_alloc(lab, 0, (size_t)(i % 300) + 1)) != NULL);
    struct fa_lab_stats s = stats(lab);
    CHECK_EQ(s.lock_acquisitions, N); /* reading the statistics does not count */
    for (int i = 0; i < N; i++)
        _fa_lab_instance_free(lab, p[i], "free");
    s = stats(lab);
    CHECK_EQ(s.lock_acquisitions, 2 * N);
    CHECK_EQ(s.lock_contended, 0);
    CHECK_EQ(s.futex_waits, 0);
    CHECK_EQ(s.futex_wakes, 0);
    CHECK_EQ(s.heaps, 1);
    CHECK_EQ(s.mallocs, N);
    CHECK_EQ(s.frees, N);
    _fa_lab_instance_destroy(lab);
}

/* ---- global: a contended acquisition ---- */

static void *alloc_once(void *arg)
{
    struct fa_lab *lab = arg;
    void *p = _fa_lab_instance_alloc(lab, 0, 100);
    CHECK(p != NULL);
    return p;
}

static void test_global_contended(void)
{
    struct fa_lab *lab = make_lab(FA_LOCK_GLOBAL, 0);
    fa_lab_lock_t *lock = &lab->slot[0].lock;
    fa_lab_lock(lock); /* we hold it: the thread must wait */
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, alloc_once, lab), 0);
    /* State 2: the thread gave up spinning and is going to sleep (or sleeps) in the kernel. */
    while (__atomic_load_n(&lock->state, __ATOMIC_ACQUIRE) != 2)
        sched_yield();
    fa_lab_unlock(lock);
    void *p;
    CHECK_EQ(pthread_join(t, &p), 0);
    struct fa_lab_stats s = stats(lab);
    CHECK_EQ(s.lock_acquisitions, 2); /* ours and the thread's */
    CHECK_EQ(s.lock_contended, 1);
    CHECK_GE(s.futex_waits, 1);
    CHECK_GE(s.futex_wakes, 1);
    CHECK_EQ(s.mallocs, 1);
    _fa_lab_instance_free(lab, p, "free");
    _fa_lab_instance_destroy(lab);
}

/* ---- arenas: trylock moves, frees go home ---- */

struct arena_script {
    struct fa_lab *lab;
    sem_t go, done;
    void *first, *second;
};

static void *arena_thread(void *arg)
{
    struct arena_script *a = arg;
    a->first = _fa_lab_instance_alloc(a->lab, 0, 200);
    sem_post(&a->done);
    sem_wait(&a->go); /* main now holds our arena's lock */
    a->second = _fa_lab_instance_alloc(a->lab, 0, 200);
    sem_post(&a->done);
    return NULL;
}

static void test_arenas(void)
{
    struct fa_lab *lab = make_lab(FA_LOCK_ARENAS, 2);
    CHECK_EQ(lab->slots, 2);
    void *mine = _fa_lab_instance_alloc(lab, 0, 100); /* first thread: arena 0 */
    CHECK(in_slot(lab, 0, mine));
    struct arena_script a = {.lab = lab};
    sem_init(&a.go, 0, 0);
    sem_init(&a.done, 0, 0);
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, arena_thread, &a), 0);
    sem_wait(&a.done);
    CHECK(in_slot(lab, 1, a.first)); /* the next new thread: the next arena */
    fa_lab_lock(&lab->slot[1].lock);
    sem_post(&a.go);
    sem_wait(&a.done);
    CHECK(in_slot(lab, 0, a.second)); /* its arena was locked: it moved on */
    fa_lab_unlock(&lab->slot[1].lock);
    CHECK_EQ(pthread_join(t, NULL), 0);
    struct fa_lab_stats s = stats(lab);
    CHECK_EQ(s.lock_contended, 1); /* the failed trylock */
    CHECK_EQ(s.futex_waits, 0);
    CHECK_EQ(s.heaps, 2);
    /* Frees from this thread go to each block's own arena. */
    _fa_lab_instance_free(lab, a.first, "free");
    _fa_lab_instance_free(lab, a.second, "free");
    CHECK_EQ(fa_lab_slot_heap(lab, 0)->count.frees, 1);
    CHECK_EQ(fa_lab_slot_heap(lab, 1)->count.frees, 1);
    _fa_lab_instance_free(lab, mine, "free");
    CHECK_EQ(_fa_lab_instance_check(lab), 2);
    sem_destroy(&a.go);
    sem_destroy(&a.done);
    _fa_lab_instance_destroy(lab);
}

/* ---- thread: remote frees and heap adoption ---- */

struct thread_script {
    struct fa_lab *lab;
    sem_t go, done;
    void *block;
    fa_classic_heap *heap;
    bool exit_lab;
};

static void *owner_thread(void *arg)
{
    struct thread_script *t = arg;
    t->block = _fa_lab_instance_alloc(t->lab, 0, 300);
    t->heap = _fa_lab_tls.heap;
    sem_post(&t->done);
    sem_wait(&t->go);                                 /* main freed the block meanwhile */
    void *q = _fa_lab_instance_alloc(t->lab, 0, 300); /* takes the remote frees back first */
    CHECK(q == t->block);                             /* ... so the same block serves again */
    _fa_lab_instance_free(t->lab, q, "free");
    if (t->exit_lab)
        _fa_lab_instance_thread_exit(t->lab);
    return NULL;
}

static void *adopter_thread(void *arg)
{
    struct thread_script *t = arg;
    t->block = _fa_lab_instance_alloc(t->lab, 0, 300);
    t->heap = _fa_lab_tls.heap;
    _fa_lab_instance_free(t->lab, t->block, "free");
    _fa_lab_instance_thread_exit(t->lab);
    return NULL;
}

static void test_thread_mode(void)
{
    struct fa_lab *lab = make_lab(FA_LOCK_THREAD, 0);
    void *mine = _fa_lab_instance_alloc(lab, 0, 100);
    fa_classic_heap *main_heap = _fa_lab_tls.heap;
    CHECK(main_heap != NULL);

    struct thread_script t = {.lab = lab, .exit_lab = true};
    sem_init(&t.go, 0, 0);
    sem_init(&t.done, 0, 0);
    pthread_t th;
    CHECK_EQ(pthread_create(&th, NULL, owner_thread, &t), 0);
    sem_wait(&t.done);
    CHECK(t.heap != main_heap);
    _fa_lab_instance_free(lab, t.block, "free"); /* a remote free: onto the owner's list */
    CHECK(__atomic_load_n(&t.heap->remote, __ATOMIC_ACQUIRE) == t.block);
    CHECK_EQ(FA_HEAP_READ(t.heap, frees), 0);
    sem_post(&t.go);
    CHECK_EQ(pthread_join(th, NULL), 0);
    CHECK(__atomic_load_n(&t.heap->remote, __ATOMIC_ACQUIRE) == NULL);
    CHECK_EQ(FA_HEAP_READ(t.heap, frees), 2);
    CHECK(lab->slot[fa_lab_slot_of_heap(lab, t.heap)].in_pool);

    /* A new thread adopts the exited thread's heap. */
    struct thread_script u = {.lab = lab};
    CHECK_EQ(pthread_create(&th, NULL, adopter_thread, &u), 0);
    CHECK_EQ(pthread_join(th, NULL), 0);
    CHECK(u.heap == t.heap);
    CHECK(in_slot(lab, fa_lab_slot_of_heap(lab, t.heap), u.block));

    _fa_lab_instance_free(lab, mine, "free"); /* our own heap: a local free */
    CHECK_EQ(FA_HEAP_READ(main_heap, frees), 1);
    struct fa_lab_stats s = stats(lab);
    CHECK_EQ(s.heaps, 2);
    CHECK_EQ(s.mallocs, s.frees);
    CHECK_EQ(s.lock_acquisitions, 0); /* no lock in this mode */
    CHECK_EQ(_fa_lab_instance_check(lab), 2);
    sem_destroy(&t.go);
    sem_destroy(&t.done);
    _fa_lab_instance_thread_exit(lab);
    _fa_lab_instance_destroy(lab);
}

int main(void)
{
    test_global_counts();
    test_global_contended();
    test_arenas();
    test_thread_mode();
    printf("lab/locks: ok\n");
    return 0;
}

/* Meshing (FITALLOC_MESH=1) with threads: blocks written by other threads while their pages
 * are meshed lose no write, and fork after meshing (with a thread writing meanwhile) leaves
 * parent and child each their own data. */
#include <pthread.h>
#include <sys/wait.h>

#include "mesh_test.h"

/* Writers: threads rewrite their blocks while the mesher copies them. */
static atomic_int stop;

static void *writer(void *arg)
{
    size_t part = (size_t)(uintptr_t)arg;
    uint64_t round = 0;
    while (!atomic_load(&stop)) {
        round++;
        for (size_t i = part; i < count; i += 2)
            if (blocks[i]) {
                uint64_t tag = (round << 32) | i;
                fa_pattern_fill(blocks[i], BLOCK, tag);
                CHECK_MSG(fa_pattern_find_bad(blocks[i], BLOCK, tag) == (size_t)-1,
                          "block %zu lost a write", i);
            }
    }
    for (size_t i = part; i < count; i += 2)
        if (blocks[i]) {
            tags[i] = (round << 32) | i;
            CHECK(fa_pattern_find_bad(blocks[i], BLOCK, tags[i]) == (size_t)-1);
        }
    return NULL;
}

static void case_writers(void)
{
    /* Freed but not meshed yet: the passes below mesh while the writers write. */
    allocate_blocks();
    free_most(2);
    pthread_t t[2];
    for (size_t i = 0; i < 2; i++)
        CHECK_EQ(pthread_create(&t[i], NULL, writer, (void *)(uintptr_t)i), 0);
    uint64_t before = fa_test_stats().mesh_merges;
    for (int pass = 0; pass < 20; pass++)
        fa_collect();
    atomic_store(&stop, 1);
    for (size_t i = 0; i < 2; i++)
        CHECK_EQ(pthread_join(t[i], NULL), 0);
    CHECK(fa_test_stats().mesh_merges > before);
    check_blocks();
    free_all();
}

/* fork after meshing, with a thread writing the even blocks meanwhile (rewrite_even_blocks):
 * each side sees its own data. */
static void check_odd(void)
{
    for (size_t i = 1; i < count; i += 2)
        if (blocks[i])
            CHECK(fa_pattern_find_bad(blocks[i], BLOCK, tags[i]) == (size_t)-1);
}

static void case_fork(void)
{
    fragment(4);
    CHECK(fa_test_stats().mesh_saved > 0);
    pthread_t t;
    /* ThreadSanitizer would take the writer and the copies at fork for a race. */
    bool writer = !FA_TEST_TSAN;
    if (writer)
        CHECK_EQ(pthread_create(&t, NULL, rewrite_even_blocks, NULL), 0);
    for (int round = 0; round < 3; round++) {
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
            /* The child's meshed pages are mapped onto its own copy when first touched (round
             * 0), by its mesher's first pass (round 1), or before it forks (round 2). */
            if (round == 1)
                fa_collect();
            if (round == 2) {
                pid_t grandchild = fork();
                CHECK(grandchild >= 0);
                if (grandchild == 0) {
                    for (size_t i = 0; i < count; i++)
                        if (blocks[i] &&
                            fa_pattern_find_bad(blocks[i], BLOCK, tags[i]) != (size_t)-1)
                            _exit(3);
                    _exit(0);
                }
                int status;
                CHECK_EQ(waitpid(grandchild, &status, 0), grandchild);
                CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
            }
            for (size_t i = 0; i < count; i++)
                if (blocks[i]) {
                    CHECK(fa_pattern_find_bad(blocks[i], BLOCK, tags[i]) == (size_t)-1);
                    fa_pattern_fill(blocks[i], BLOCK, ~tags[i]);
                }
            for (size_t i = 0; i < count; i++)
                if (blocks[i])
                    CHECK(fa_pattern_find_bad(blocks[i], BLOCK, ~tags[i]) == (size_t)-1);
            _exit(0);
        }
        int status;
        CHECK_EQ(waitpid(pid, &status, 0), pid);
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
        check_odd(); /* the child's writes are not ours */
    }
    atomic_store(&mesh_test_stop, 1);
    if (writer)
        CHECK_EQ(pthread_join(t, NULL), 0);
    check_blocks();
    free_all();
}

int main(int argc, char **argv)
{
    /* ThreadSanitizer cannot see the write barrier (a fault, then a retry): not writers. */
    static const struct mesh_case cases[] = {{"fork", case_fork}, {"writers", case_writers}};
    if (argc < 2) {
        mesh_rerun_cases(argv[0], cases, FA_TEST_TSAN ? 1 : 2);
        return 0;
    }
    return mesh_run_case(argv[1], cases, 2);
}

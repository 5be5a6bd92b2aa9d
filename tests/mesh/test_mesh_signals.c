/* With meshing on, the program's SIGSEGV handler keeps seeing its faults: meshing installs no
 * handler (what it holds still is frozen with userfaultfd, where writers wait in the kernel).
 * A handler installed before meshing starts, and one installed after, both run on a genuine
 * fault: a write into memory the program made read-only, outside fitalloc's heap, and inside
 * it (an OS page of a live block's page the program protects itself). With no handler of the
 * program's, a genuine fault still ends the process with SIGSEGV (or, under a sanitizer, with
 * its report). */
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "child.h"
#include "mesh_test.h"

static sigjmp_buf back;
static volatile sig_atomic_t caught;

static void on_segv(int sig, siginfo_t *info, void *context)
{
    (void)sig;
    (void)info;
    (void)context;
    caught++;
    siglongjmp(back, 1);
}

static void install(void)
{
    struct sigaction sa = {.sa_sigaction = on_segv, .sa_flags = SA_SIGINFO};
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGSEGV, &sa, NULL), 0);
}

/* A write into a read-only page of our own: the program's handler must run. */
static void genuine_fault(void)
{
    char *page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(page != MAP_FAILED);
    int before = caught;
    if (!sigsetjmp(back, 1))
        *(volatile char *)page = 1;
    CHECK_EQ(caught, before + 1);
    munmap(page, 4096);
}

/* The same inside the heap: the OS page of a live block, made read-only by the program. */
static void genuine_fault_in_heap(void)
{
    void *block = fa_malloc(BLOCK);
    char *page = (char *)((uintptr_t)block & ~(uintptr_t)4095);
    CHECK_EQ(mprotect(page, 4096, PROT_READ), 0);
    int before = caught;
    if (!sigsetjmp(back, 1))
        *(volatile char *)block = 1;
    CHECK_EQ(caught, before + 1);
    CHECK_EQ(mprotect(page, 4096, PROT_READ | PROT_WRITE), 0);
    fa_free(block);
}

static void case_before(void)
{
    install();
    fragment(6);
    CHECK(fa_test_stats().mesh_merges > 0);
    genuine_fault();
    genuine_fault_in_heap();
    check_blocks();
    free_all();
}

static void case_after(void)
{
    fragment(7);
    CHECK(fa_test_stats().mesh_merges > 0);
    install();
    /* More meshing after the program's handler came. */
    for (size_t i = 0; i < count; i += 3) {
        fa_free(blocks[i]);
        blocks[i] = NULL;
    }
    fa_collect();
    genuine_fault();
    check_blocks();
    free_all();
}

/* Meshing, merges and a fork leave SIGSEGV's disposition as the program (here: the default, or
 * a sanitizer's handler) had it. */
static void case_untouched(void)
{
    struct sigaction before, after;
    CHECK_EQ(sigaction(SIGSEGV, NULL, &before), 0);
    fragment(10);
    CHECK(fa_test_stats().mesh_merges > 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
        _exit(0);
    CHECK_EQ(waitpid(pid, NULL, 0), pid);
    CHECK_EQ(sigaction(SIGSEGV, NULL, &after), 0);
    CHECK(after.sa_flags == before.sa_flags && after.sa_handler == before.sa_handler);
    free_all();
}

static void fault_without_handler(void *arg)
{
    (void)arg;
    fragment(8);
    char *page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    *(volatile char *)page = 1;
}

/* Under a sanitizer, the handler before fitalloc's is the sanitizer's: it reports the fault. */
static void case_default(void)
{
    char out[4096];
    int status = fa_test_run_child(fault_without_handler, NULL, out, sizeof out);
    if (FA_TEST_SANITIZED)
        CHECK_MSG(strstr(out, "DEADLYSIGNAL") && strstr(out, "SEGV"), "status %d: %s", status, out);
    else
        CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, "status %d: %s", status, out);
}

int main(int argc, char **argv)
{
    static const struct mesh_case cases[] = {{"before", case_before},
                                             {"after", case_after},
                                             {"default", case_default},
                                             {"untouched", case_untouched}};
    const size_t n = sizeof cases / sizeof cases[0];
    if (argc < 2) {
        mesh_rerun_cases(argv[0], cases, n);
        return 0;
    }
    return mesh_run_case(argv[1], cases, n);
}

/* fork of a process with meshed pages while its threads write into them: in the child, no
 * system call may fail because of meshing. The child's first access to every live block is a
 * system call writing into it (read, readv, recv, or fread unbuffered, so that the C library
 * reads into the block itself), with SIGSEGV blocked and a handler of its own installed, as a
 * program may do after fork: every call must bring its 64 bytes (no EFAULT), then the child
 * checks every block, writes every block and checks it again. The parent's blocks keep the
 * parent's data. A child that left a meshed frame unmapped until its first touch failed the
 * first read with EFAULT. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "mesh_test.h"

static void on_segv(int sig)
{
    (void)sig;
    _exit(9);
}

/* Exit codes of the child, so that the parent can say what failed. */
enum { CHILD_OK, CHILD_EFAULT = 3, CHILD_SHORT, CHILD_DATA, CHILD_SETUP };

/* Block p filled with the pattern of `tag`, by the kernel, through method `m`. */
static int fill_by_kernel(int m, char *p, uint64_t tag, int pipe_fds[2], int sock[2], FILE *in)
{
    char source[BLOCK];
    fa_pattern_fill(source, BLOCK, tag);
    int out = m == 2 ? sock[1] : pipe_fds[1];
    if (write(out, source, BLOCK) != BLOCK)
        return CHILD_SETUP;
    ssize_t n;
    struct iovec iov[2] = {{p, BLOCK / 2}, {p + BLOCK / 2, BLOCK / 2}};
    switch (m) {
    case 0: n = read(pipe_fds[0], p, BLOCK); break;
    case 1: n = readv(pipe_fds[0], iov, 2); break;
    case 2: n = recv(sock[0], p, BLOCK, 0); break;
    default:
        n = (ssize_t)fread(p, 1, BLOCK, in);
        if (n < BLOCK && ferror(in))
            n = -1;
        break;
    }
    if (n < 0 && errno == EFAULT)
        return CHILD_EFAULT;
    return n == BLOCK ? CHILD_OK : CHILD_SHORT;
}

static int child(void)
{
    sigset_t segv;
    sigemptyset(&segv);
    sigaddset(&segv, SIGSEGV);
    signal(SIGSEGV, on_segv);
    if (pthread_sigmask(SIG_BLOCK, &segv, NULL) != 0)
        return CHILD_SETUP;
    int pipe_fds[2], sock[2];
    if (pipe(pipe_fds) != 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sock) != 0)
        return CHILD_SETUP;
    /* read, readv and recv first, before any allocation (which may start the purge thread,
     * whose pass would map what is left); then fread (fdopen allocates) over every 4th. */
    for (size_t i = 0; i < count; i++)
        if (blocks[i]) {
            int status = fill_by_kernel((int)(i % 3), blocks[i], ~tags[i], pipe_fds, sock, NULL);
            if (status != CHILD_OK)
                return status;
        }
    FILE *in = fdopen(pipe_fds[0], "r");
    if (!in || setvbuf(in, NULL, _IONBF, 0) != 0)
        return CHILD_SETUP;
    for (size_t i = 0; i < count; i += 4)
        if (blocks[i]) {
            int status = fill_by_kernel(3, blocks[i], ~tags[i], pipe_fds, sock, in);
            if (status != CHILD_OK)
                return status;
        }
    for (size_t i = 0; i < count; i++)
        if (blocks[i]) {
            if (fa_pattern_find_bad(blocks[i], BLOCK, ~tags[i]) != (size_t)-1)
                return CHILD_DATA;
            fa_pattern_fill(blocks[i], BLOCK, tags[i] + 1);
        }
    for (size_t i = 0; i < count; i++)
        if (blocks[i] && fa_pattern_find_bad(blocks[i], BLOCK, tags[i] + 1) != (size_t)-1)
            return CHILD_DATA;
    return CHILD_OK;
}

static void case_fork(void)
{
    fragment(9);
    if (fa_test_stats().mesh_merges == 0) {
        puts("mesh/mesh_fork: skipped: nothing merged here (no userfaultfd: decision 023)");
        exit(77);
    }
    pthread_t t[2];
    /* ThreadSanitizer would take the writers and the copies at fork for a race. */
    size_t writers = FA_TEST_TSAN ? 0 : 2;
    for (size_t i = 0; i < writers; i++)
        CHECK_EQ(pthread_create(&t[i], NULL, rewrite_even_blocks, NULL), 0);
    for (int round = 0; round < 3; round++) {
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0)
            _exit(child());
        int status;
        CHECK_EQ(waitpid(pid, &status, 0), pid);
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == CHILD_OK,
                  "round %d: the child %s %d (3: EFAULT, 4: short read, 5: data, 6: set-up, "
                  "9: SIGSEGV)",
                  round, WIFEXITED(status) ? "exited with" : "died of signal",
                  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        /* Whatever the child wrote is not the parent's. */
        for (size_t i = 1; i < count; i += 2)
            if (blocks[i])
                CHECK(fa_pattern_find_bad(blocks[i], BLOCK, tags[i]) == (size_t)-1);
    }
    atomic_store(&mesh_test_stop, 1);
    for (size_t i = 0; i < writers; i++)
        CHECK_EQ(pthread_join(t[i], NULL), 0);
    check_blocks();
    free_all();
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        /* Again in a process with meshing on (exec, so that a skip's status is ours). */
        const char *env[][2] = {{"FITALLOC_MESH", "1"},
                                {FA_TEST_TSAN ? "FITALLOC_PURGE_THREAD" : "FITALLOC_VERBOSE", "0"},
                                {FA_TEST_TSAN ? "FITALLOC_MESH_PERIOD" : "FITALLOC_VERBOSE",
                                 FA_TEST_TSAN ? "1000s" : "0"}};
        for (size_t i = 0; i < 3; i++)
            CHECK_EQ(setenv(env[i][0], env[i][1], 1), 0);
        char *args[] = {argv[0], (char *)"fork", NULL};
        execv("/proc/self/exe", args);
        return 127;
    }
    CHECK_EQ(fa_option_get("MESH"), 1);
    case_fork();
    return 0;
}

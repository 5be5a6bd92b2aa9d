/* Meshing where the system refuses what it needs: the program runs as without meshing, its data
 * intact, its memory still given back, and FITALLOC_VERBOSE=1 says what was refused.
 *   memfd      a seccomp filter refuses memfd_create: no merge;
 *   uffd       a seccomp filter refuses userfaultfd (the system call and /dev/userfaultfd's
 *              ioctl): no merge, as for most unprivileged processes;
 *   proc       /proc is an empty tmpfs (a mount namespace): meshing runs without it, fork too;
 *   huge       FITALLOC_HUGE_PAGES=1: meshing off;
 *   merge-off  FITALLOC_MESH_MERGE=0: no merge, the frames without a live byte given back;
 *   segv-fork  a thread that blocks SIGSEGV forks with meshed pages: the child's blocks read
 *              by the kernel, then by the child;
 *   own-uffd   the program registered its blocks' pages with a userfaultfd of its own, which
 *              meshing then cannot freeze: those frames are not merged (and the program not
 *              stopped).
 * Each case runs in a fresh process whose stderr goes to fallback-<case>.err, which the parent
 * reads. A case the system cannot set up (no seccomp, no mount namespace) is skipped. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/userfaultfd.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mount.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "mesh_test.h"

#define SKIP 77

/* A seccomp filter: system call `nr` fails with EPERM, and so does ioctl(_, `cmd`) if cmd is
 * not 0. false if the kernel (or an emulator) takes no filter. */
static bool refuse(long nr, unsigned long cmd)
{
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, cmd ? __NR_ioctl : (uint32_t)-1, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)cmd, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof code / sizeof *code, code};
    return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
           prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

/* /proc replaced by an empty tmpfs in a mount namespace of this (single-threaded) process. */
static bool hide_proc(void)
{
    if (unshare(CLONE_NEWNS) != 0 && unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
        return false;
    return mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0 &&
           mount("none", "/proc", "tmpfs", 0, NULL) == 0;
}

static bool set_up(const char *name)
{
    if (strcmp(name, "memfd") == 0)
        return refuse(__NR_memfd_create, 0);
    if (strcmp(name, "uffd") == 0)
        return refuse(__NR_userfaultfd, USERFAULTFD_IOC_NEW);
    if (strcmp(name, "proc") == 0)
        return hide_proc();
    return true;
}

/* Run case `name` in a fresh process of this program; what it printed on stderr, in `said`. */
static int run_case(const char *self, const char *name, const char *const env[], char *said,
                    size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "fallback-%s.err", name);
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || dup2(fd, 2) != 2)
            _exit(125);
        for (size_t i = 0; env[i]; i++)
            if (putenv((char *)env[i]) != 0)
                _exit(125);
        if (!set_up(name))
            _exit(SKIP);
        execl(self, self, "work", name, (char *)NULL);
        _exit(127);
    }
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    CHECK(fd >= 0);
    ssize_t n = read(fd, said, size - 1);
    close(fd);
    said[n > 0 ? n : 0] = 0;
    CHECK_MSG(WIFEXITED(status), "case %s: died of signal %d; it said: %s", name,
              WIFSIGNALED(status) ? WTERMSIG(status) : 0, said);
    CHECK_MSG(WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == SKIP,
              "case %s: exit %d; it said: %s", name, WEXITSTATUS(status), said);
    if (WEXITSTATUS(status) == SKIP)
        printf("case %s: skipped (the system cannot set it up)\n", name);
    return WEXITSTATUS(status);
}

static void expect(const char *self, const char *name, const char *const env[], const char *line)
{
    char said[4096];
    if (run_case(self, name, env, said, sizeof said) == 0 && line)
        CHECK_MSG(strstr(said, line),
                  "case %s: no line \"%s\" under FITALLOC_VERBOSE=1; it said: %s", name, line,
                  said);
}

/* In a fork child: every live block read by the kernel (a pwrite from it), then by us. */
static void child_reads_blocks(void)
{
    int file = open("fallback-scratch.tmp", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (file < 0)
        _exit(3);
    unlink("fallback-scratch.tmp");
    for (size_t i = 0; i < count; i++)
        if (blocks[i] && pwrite(file, blocks[i], BLOCK, 0) != BLOCK)
            _exit(4);
    check_blocks();
    _exit(0);
}

static void fork_and_check(bool block_segv)
{
    sigset_t segv, old;
    sigemptyset(&segv);
    sigaddset(&segv, SIGSEGV);
    if (block_segv)
        CHECK_EQ(pthread_sigmask(SIG_BLOCK, &segv, &old), 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
        child_reads_blocks();
    if (block_segv)
        CHECK_EQ(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "fork child: %s %d",
              WIFEXITED(status) ? "exit" : "signal",
              WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

/* The pages of every block registered with a userfaultfd of the program's own (write
 * protection mode, nothing protected). false if the process may not have one. */
static bool register_blocks_elsewhere(void)
{
    int fd = (int)syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
    struct uffdio_api api = {.api = UFFD_API};
    if (fd < 0 || ioctl(fd, UFFDIO_API, &api) != 0)
        return false;
    uintptr_t last = 0;
    for (size_t i = 0; i < count; i++) {
        uintptr_t page = (uintptr_t)blocks[i] & ~(uintptr_t)4095;
        struct uffdio_register reg = {.range = {page, 4096}, .mode = UFFDIO_REGISTER_MODE_WP};
        if (page != last)
            CHECK_EQ(ioctl(fd, UFFDIO_REGISTER, &reg), 0);
        last = page;
    }
    return true; /* the descriptor stays open: its registrations with it */
}

static void work(const char *name)
{
    if (strcmp(name, "proc") == 0)
        CHECK(open("/proc/self/stat", O_RDONLY) < 0);
    allocate_blocks();
    uint64_t full = fa_test_stats().committed;
    if (strcmp(name, "own-uffd") == 0 && !register_blocks_elsewhere())
        exit(SKIP);
    free_most(5);
    /* Runs of 128 neighbouring blocks freed whole: frames without a live block to give back. */
    if (strcmp(name, "merge-off") == 0)
        for (size_t i = 0; i < count; i++)
            if (blocks[i] && i / 128 % 2) {
                fa_free(blocks[i]);
                blocks[i] = NULL;
            }
    for (int pass = 0; pass < 8; pass++)
        fa_collect();
    check_blocks();
    struct fa_stats s = fa_test_stats();
    if (strcmp(name, "memfd") == 0 || strcmp(name, "uffd") == 0 || strcmp(name, "huge") == 0 ||
        strcmp(name, "own-uffd") == 0 || strcmp(name, "merge-off") == 0)
        CHECK_EQ(s.mesh_merges, 0);
    if (strcmp(name, "merge-off") == 0)
        CHECK_MSG(s.mesh_returned >= 64 * 4096, "%llu bytes given back, 64 frames expected",
                  (unsigned long long)s.mesh_returned);
    if (strcmp(name, "huge") == 0)
        CHECK_EQ(s.mesh_detached, 0);
    if (strcmp(name, "segv-fork") == 0 && s.mesh_merges == 0)
        exit(SKIP); /* nothing meshed here: no userfaultfd (decision 023) */
    fork_and_check(strcmp(name, "segv-fork") == 0);
    check_blocks();
    free_all();
    fa_collect(); /* the mesher takes the frees into detached pages and releases them */
    fa_collect(); /* then they are purged */
    uint64_t after = fa_test_stats().committed;
    CHECK_MSG(after < full / 2, "case %s: %llu bytes committed after every block freed, %llu full",
              name, (unsigned long long)after, (unsigned long long)full);
}

int main(int argc, char **argv)
{
    if (FA_TEST_SANITIZED) {
        puts("mesh/mesh_fallbacks: skipped under a sanitizer (meshing is off under ASan, and TSan "
             "cannot follow the forks here)");
        return SKIP;
    }
    if (argc == 3 && strcmp(argv[1], "work") == 0) {
        work(argv[2]);
        return 0;
    }
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    CHECK(n > 0);
    self[n] = 0;
    const char *mesh[] = {"FITALLOC_MESH=1", "FITALLOC_MESH_PERIOD=1", "FITALLOC_VERBOSE=1", NULL};
    const char *huge[] = {"FITALLOC_MESH=1", "FITALLOC_HUGE_PAGES=1", "FITALLOC_VERBOSE=1", NULL};
    expect(self, "memfd", mesh, "fitalloc: meshing gives back empty pages but merges none");
    expect(self, "uffd", mesh, "merges none: no userfaultfd that catches the kernel's writes");
    expect(self, "proc", mesh, NULL);
    expect(self, "huge", huge, "fitalloc: meshing off: FITALLOC_HUGE_PAGES=1");
    const char *merge_off[] = {"FITALLOC_MESH=1", "FITALLOC_MESH_PERIOD=1", "FITALLOC_MESH_MERGE=0",
                               "FITALLOC_VERBOSE=1", NULL};
    expect(self, "merge-off", merge_off, "merges none: FITALLOC_MESH_MERGE=0");
    expect(self, "segv-fork", mesh, NULL);
    expect(self, "own-uffd", mesh, NULL);
    return 0;
}

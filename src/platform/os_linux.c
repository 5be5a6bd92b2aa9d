/* Linux implementation of os.h: mmap, madvise, mremap, futex, clock_gettime, open, write, kill,
 * fcntl. */
#define _GNU_SOURCE
#include "platform/os.h"
#include "platform/keep_errno.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ThreadSanitizer does not follow mremap: memory moved or grown with it looks like a data
 * race to it. Sanitizer builds copy instead (the callers fall back when a remap fails). */
#if defined(__SANITIZE_THREAD__)
#define FA_USE_MREMAP 0
#else
#define FA_USE_MREMAP 1
#endif

static void *map_aligned(size_t size, size_t align, int prot)
{
    FA_KEEP_ERRNO;
    /* Every mapping is page-aligned: no more is needed, nor a trim (a system call). */
    size_t over = align <= FA_OS_PAGE ? size : size + align;
    if (over < size)
        return NULL;
    /* Map more than needed and trim both ends: the kernel gives no alignment guarantee. */
    char *raw = mmap(NULL, over, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    uintptr_t start = ((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1);
    size_t head = start - (uintptr_t)raw;
    if (head)
        munmap(raw, head);
    size_t tail = over - head - size;
    if (tail)
        munmap((char *)start + size, tail);
    return (void *)start;
}

void *_fa_os_map_aligned(size_t size, size_t align)
{
    return map_aligned(size, align, PROT_READ | PROT_WRITE);
}

void *_fa_os_reserve(size_t size, size_t align)
{
    return map_aligned(size, align, PROT_NONE);
}

bool _fa_os_commit(void *p, size_t size)
{
    FA_KEEP_ERRNO;
    return mprotect(p, size, PROT_READ | PROT_WRITE) == 0;
}

/* The calls whose failure the contract ignores: errno stays as the program left it. */
static void protect_quietly(void *p, size_t size, int prot)
{
    FA_KEEP_ERRNO;
    mprotect(p, size, prot);
}

static void advise_quietly(void *p, size_t size, int advice)
{
    FA_KEEP_ERRNO;
    madvise(p, size, advice);
}

void _fa_os_protect(void *p, size_t size)
{
    protect_quietly(p, size, PROT_NONE);
}

void _fa_os_unprotect(void *p, size_t size)
{
    protect_quietly(p, size, PROT_READ | PROT_WRITE);
}

void _fa_os_unmap(void *p, size_t size)
{
    FA_KEEP_ERRNO;
    munmap(p, size);
}

void _fa_os_purge(void *p, size_t size)
{
    advise_quietly(p, size, MADV_DONTNEED);
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

void _fa_os_populate(void *p, size_t size)
{
    advise_quietly(p, size, MADV_POPULATE_WRITE);
}

size_t _fa_os_resident_pages(const void *p, size_t size)
{
    unsigned char vec[512]; /* one byte per page: 2 MiB per call */
    size_t resident = 0;
    FA_KEEP_ERRNO;
    for (size_t done = 0; done < size;) {
        size_t len = size - done < sizeof vec * FA_OS_PAGE ? size - done : sizeof vec * FA_OS_PAGE;
        if (mincore((char *)p + done, len, vec) != 0)
            break;
        for (size_t i = 0; i < (len + FA_OS_PAGE - 1) / FA_OS_PAGE; i++)
            resident += vec[i] & 1;
        done += len;
    }
    return resident;
}

void _fa_os_huge(void *p, size_t size)
{
    advise_quietly(p, size, MADV_HUGEPAGE);
}

bool _fa_os_grow_in_place(void *p, size_t old_size, size_t new_size)
{
    if (!FA_USE_MREMAP)
        return false;
    FA_KEEP_ERRNO;
    void *q = mremap(p, old_size, new_size, 0);
    return q != MAP_FAILED;
}

void *_fa_os_move_aligned(void *p, size_t old_size, size_t new_size, size_t align)
{
    if (!FA_USE_MREMAP)
        return NULL;
    FA_KEEP_ERRNO;
    /* Reserve an aligned target, then let the kernel move the pages there without copying. */
    void *target = _fa_os_map_aligned(new_size, align);
    if (!target)
        return NULL;
    void *q = mremap(p, old_size, new_size, MREMAP_MAYMOVE | MREMAP_FIXED, target);
    if (q == MAP_FAILED) {
        munmap(target, new_size);
        return NULL;
    }
    return q;
}

uint64_t _fa_os_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

uint64_t _fa_os_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t clock_ns(clockid_t clock)
{
    struct timespec ts;
    if (clock_gettime(clock, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t _fa_os_thread_cpu_ns(void)
{
    return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

uint64_t _fa_os_process_cpu_ns(void)
{
    return clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

int _fa_os_write(int fd, const void *buf, size_t len)
{
    FA_KEEP_ERRNO;
    const char *p = buf;
    int error = 0;
    while (len > 0) {
        /* The system call itself: write() is a cancellation point, and a thread cancelled in
         * the middle of writing out a trace buffer would leave its lock held. */
        ssize_t n = syscall(SYS_write, fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            error = n < 0 ? errno : EIO;
            break;
        }
        p += n;
        len -= (size_t)n;
    }
    return error;
}

int _fa_os_create_append(const char *path)
{
    FA_KEEP_ERRNO;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    return fd >= 0 ? fd : -errno;
}

bool _fa_os_read_head(const char *path, void *buf, size_t len)
{
    FA_KEEP_ERRNO;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, len) : -1;
    if (fd >= 0)
        close(fd);
    return n == (ssize_t)len;
}

bool _fa_os_copy_file(const char *path, int fd)
{
    FA_KEEP_ERRNO;
    int in = open(path, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return false;
    char buf[4096];
    ssize_t n;
    bool ok = true;
    while (ok && ((n = read(in, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)))
        ok = n < 0 || _fa_os_write(fd, buf, (size_t)n) == 0;
    close(in);
    return ok && n == 0;
}

void _fa_os_close(int fd)
{
    FA_KEEP_ERRNO;
    close(fd);
}

const char *_fa_os_error_text(int err)
{
    const char *text = strerrordesc_np(err);
    return text ? text : "unknown error";
}

bool _fa_os_process_alive(int pid)
{
    FA_KEEP_ERRNO;
    return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

void _fa_os_futex_wait(uint32_t *word, uint32_t expected, long timeout_ms)
{
    FA_KEEP_ERRNO;
    struct timespec ts = {timeout_ms / 1000, (timeout_ms % 1000) * 1000000L};
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, timeout_ms < 0 ? NULL : &ts, NULL, 0);
}

void _fa_os_futex_wake(uint32_t *word, int n)
{
    FA_KEEP_ERRNO;
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

int _fa_os_thread_count(void)
{
    FA_KEEP_ERRNO;
    char buf[1024];
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    int error = n < 0 ? errno : EIO;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return -error;
    buf[n] = 0;
    /* Fields after the command name (which may hold spaces) start after the last ')';
     * num_threads is field 20, the 18th after it. */
    char *p = strrchr(buf, ')');
    for (int field = 2; p && field < 20; field++)
        p = strchr(p + 1, ' ');
    if (!p)
        return -EIO;
    int count = 0;
    for (p++; *p >= '0' && *p <= '9'; p++)
        count = count * 10 + (*p - '0');
    return count;
}

bool _fa_os_is_main_thread(void)
{
    return syscall(SYS_gettid) == getpid();
}

int _fa_os_pid(void)
{
    return (int)getpid();
}

int _fa_os_parent_pid(void)
{
    return (int)getppid();
}

void _fa_os_abort(void)
{
    /* What glibc's abort() does since 2.27, without relying on it: older C libraries flush
     * stdio there, which may call malloc on the corrupt heap. SIGABRT first goes to the
     * program's handler, if it has one (a crash reporter: docs/security.md, "Reports"); if the
     * handler returns, or the signal is ignored, the default action is put back and the signal
     * raised again, which ends the process whatever the program did. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGABRT);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(SIGABRT);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGABRT, &dfl, NULL);
    sigprocmask(SIG_UNBLOCK, &set, NULL); /* the handler may have blocked it again */
    raise(SIGABRT);
    _exit(127);
}

uint64_t _fa_os_random(void)
{
    uint64_t r;
    if (syscall(SYS_getrandom, &r, sizeof r, GRND_NONBLOCK) == (long)sizeof r)
        return r;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    r = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)(uintptr_t)&r ^
        ((uint64_t)getpid() << 16);
    /* splitmix64's finaliser: every input bit reaches every output bit. */
    r = (r ^ (r >> 30)) * 0xbf58476d1ce4e5b9ull;
    r = (r ^ (r >> 27)) * 0x94d049bb133111ebull;
    return r ^ (r >> 31);
}

int _fa_os_dup(int fd)
{
    FA_KEEP_ERRNO;
    return fcntl(fd, F_DUPFD_CLOEXEC, 3);
}

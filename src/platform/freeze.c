/* Memory held still against every writer, the kernel's own copies included (os.h, "freeze").
 *
 * mprotect makes a range read-only for the program's threads, whose faults a signal handler
 * can make wait; but a system call writing there (read into a block) fails with EFAULT
 * instead. userfaultfd's write protection makes both wait, inside the kernel, until the range
 * is writable again or mapped anew. Catching the kernel's faults needs a userfaultfd without
 * UFFD_USER_MODE_ONLY: allowed by vm.unprivileged_userfaultfd=1, CAP_SYS_PTRACE, or access to
 * /dev/userfaultfd (Linux 6.1); write protection of shared memory needs Linux 5.19. Where any
 * of that is refused, nothing is frozen and the caller does without. */
#define _GNU_SOURCE
#include "platform/os.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FA_FREEZE_UNKNOWN 0
#define FA_FREEZE_READY 1
#define FA_FREEZE_REFUSED 2

static int state; /* FA_FREEZE_*, under the caller's lock */
static int uffd = -1;
static const char *refusal;

static int open_userfaultfd(void)
{
    int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
    if (fd >= 0)
        return fd;
    int dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
    if (dev < 0)
        return -1;
    fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
    close(dev);
    return fd;
}

bool _fa_os_freeze_ready(const char **why)
{
    if (state == FA_FREEZE_UNKNOWN) {
        int saved = errno;
        state = FA_FREEZE_REFUSED;
        uffd = open_userfaultfd();
        struct uffdio_api api = {.api = UFFD_API, .features = UFFD_FEATURE_WP_HUGETLBFS_SHMEM};
        if (uffd < 0) {
            refusal = "no userfaultfd that catches the kernel's writes (needs "
                      "vm.unprivileged_userfaultfd=1, CAP_SYS_PTRACE or /dev/userfaultfd)";
        } else if (ioctl(uffd, UFFDIO_API, &api) != 0 ||
                   !(api.ioctls & ((uint64_t)1 << _UFFDIO_REGISTER))) {
            refusal = "userfaultfd cannot write-protect shared memory (Linux 5.19)";
            close(uffd);
            uffd = -1;
        } else {
            state = FA_FREEZE_READY;
        }
        errno = saved;
    }
    if (why)
        *why = refusal;
    return state == FA_FREEZE_READY;
}

bool _fa_os_freeze_prepare(void *p, size_t size)
{
    int saved = errno;
    struct uffdio_register reg = {.range = {(uintptr_t)p, size}, .mode = UFFDIO_REGISTER_MODE_WP};
    bool ok = ioctl(uffd, UFFDIO_REGISTER, &reg) == 0;
    errno = saved;
    return ok;
}

bool _fa_os_freeze_prepared(void *p, size_t size)
{
    int saved = errno;
    /* Write protection skips a page never touched (no page-table entry); a read puts the zero
     * page there, which it then covers. */
    for (size_t i = 0; i < size; i += FA_OS_PAGE)
        (void)*(volatile const char *)((const char *)p + i);
    struct uffdio_writeprotect wp = {.range = {(uintptr_t)p, size},
                                     .mode = UFFDIO_WRITEPROTECT_MODE_WP};
    bool ok = ioctl(uffd, UFFDIO_WRITEPROTECT, &wp) == 0;
    errno = saved;
    return ok;
}

bool _fa_os_freeze(void *p, size_t size)
{
    return _fa_os_freeze_prepare(p, size) && _fa_os_freeze_prepared(p, size);
}

bool _fa_os_thaw(void *p, size_t size)
{
    int saved = errno;
    struct uffdio_writeprotect wp = {.range = {(uintptr_t)p, size}, .mode = 0}; /* and wake */
    bool ok = ioctl(uffd, UFFDIO_WRITEPROTECT, &wp) == 0;
    errno = saved;
    return ok;
}

void _fa_os_freeze_wake_replaced(void)
{
    /* A writer waiting on a frozen page queued a message before the page was mapped anew
     * (it queues under the lock the new mapping takes): each message read is one writer to
     * wake, and none read means none waits. */
    int saved = errno;
    struct uffd_msg msg[16];
    ssize_t n;
    while ((n = read(uffd, msg, sizeof msg)) > 0)
        for (size_t i = 0; i < (size_t)n / sizeof *msg; i++)
            if (msg[i].event == UFFD_EVENT_PAGEFAULT) {
                struct uffdio_range page = {
                    msg[i].arg.pagefault.address & ~(uint64_t)(FA_OS_PAGE - 1), FA_OS_PAGE};
                ioctl(uffd, UFFDIO_WAKE, &page);
            }
    errno = saved;
}

void _fa_os_freeze_after_fork_child(void)
{
    /* The inherited descriptor acts on the parent's memory: the child opens its own. */
    if (uffd >= 0)
        close(uffd);
    uffd = -1;
    state = FA_FREEZE_UNKNOWN;
}

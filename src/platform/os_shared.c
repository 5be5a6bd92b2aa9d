/* Linux implementation of os.h's shared memory: one memory file (memfd) whose pages several
 * virtual addresses can map at once, which is what meshing needs (two virtual pages of blocks on
 * one physical page). Private anonymous memory cannot be shared that way, so only what is
 * meshed lives in the file; everything else stays anonymous. */
#define _GNU_SOURCE
#include "platform/os.h"
#include "platform/keep_errno.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

size_t _fa_os_page_size(void)
{
    return (size_t)getauxval(AT_PAGESZ);
}

int _fa_os_shared_create(size_t size)
{
    FA_KEEP_ERRNO;
    int fd = memfd_create("fitalloc-mesh", MFD_CLOEXEC);
    if (fd >= 0 && ftruncate(fd, (off_t)size) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

void *_fa_os_shared_window(int fd, size_t size)
{
    FA_KEEP_ERRNO;
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    return p == MAP_FAILED ? NULL : p;
}

bool _fa_os_map_shared_at(void *p, size_t size, int fd, size_t offset)
{
    FA_KEEP_ERRNO;
    void *q = mmap(p, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, (off_t)offset);
    return q == p;
}

bool _fa_os_dont_fork(void *p, size_t size)
{
    FA_KEEP_ERRNO;
    return madvise(p, size, MADV_DONTFORK) == 0;
}

bool _fa_os_map_fresh_at(void *p, size_t size)
{
    FA_KEEP_ERRNO;
    void *q = mmap(p, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    return q == p;
}

void _fa_os_shared_punch(int fd, size_t offset, size_t size)
{
    FA_KEEP_ERRNO;
    fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)offset, (off_t)size);
}

long _fa_os_max_mappings(void)
{
    FA_KEEP_ERRNO;
    char text[24];
    int fd = open("/proc/sys/vm/max_map_count", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, text, sizeof text) : -1;
    if (fd >= 0)
        close(fd);
    long value = 0;
    for (ssize_t i = 0; i < n && text[i] >= '0' && text[i] <= '9'; i++)
        value = value * 10 + (text[i] - '0');
    return value > 0 ? value : 65530; /* unreadable: the kernel's default */
}

/* System calls that write into blocks whose page is being meshed must never fail because of
 * meshing. Reader threads fill live blocks of sparse pages from pipes, a socket and a memory
 * file (read, readv, recv, fread, pread) while the mesher merges those pages all the time
 * (FITALLOC_MESH_PERIOD=1, and a pass run by the churning thread at every round). A merge
 * holds the frames it copies still; a kernel write into one of them must wait for the merge,
 * not fail with EFAULT. The window is a few microseconds, so the test holds it open (a hook
 * the engine calls between the copy and the remapping sleeps) so that reads do land in it.
 * Every read must succeed and bring its bytes, and every live block keep its data. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "engine/mesh.h"
#include "fitalloc.h"
#include "rerun.h"
#include "stats.h"

#define BLOCK 64
#define READERS 3
#define BATCH 20000 /* blocks allocated a round; a random 90 % freed at once */

enum method { READ, READV, RECV, FREAD, PREAD, METHODS };
static const char *const method_names[METHODS] = {"read", "readv", "recv", "fread", "pread"};

static void *targets[BATCH]; /* the round's live blocks (NULL: freed) */
static size_t target_count;
static pthread_barrier_t round_start, round_end;
static atomic_int round_over, all_done;
static atomic_ulong reads_done, efaults[METHODS];
static unsigned long reads_wanted;

struct reader {
    int pipe[2], sock[2], file;
    FILE *in; /* the pipe's read end, unbuffered: fread reads into the block itself */
    fa_rng rng;
    uint64_t id;
    size_t share;
};

static void hold_window_open(void)
{
    struct timespec t = {0, 100 * 1000};
    nanosleep(&t, NULL);
}

/* Fill block p from the reader's source by `m`; false if a call failed with EFAULT (the bytes
 * are then drained, so the next read starts clean). Any other failure ends the test. */
static bool fill(struct reader *r, enum method m, char *p)
{
    ssize_t n;
    struct iovec iov[2] = {{p, BLOCK / 2}, {p + BLOCK / 2, BLOCK / 2}};
    switch (m) {
    case READ: n = read(r->pipe[0], p, BLOCK); break;
    case READV: n = readv(r->pipe[0], iov, 2); break;
    case RECV: n = recv(r->sock[0], p, BLOCK, 0); break;
    case PREAD: n = pread(r->file, p, BLOCK, 0); break;
    default:
        n = (ssize_t)fread(p, 1, BLOCK, r->in);
        if (n < BLOCK && ferror(r->in))
            n = -1;
        break;
    }
    if (n == BLOCK)
        return true;
    CHECK_MSG(n < 0 && errno == EFAULT, "%s into %p: %zd (%s)", method_names[m], (void *)p, n,
              n < 0 ? strerror(errno) : "short");
    char drain[BLOCK];
    if (m == FREAD) {
        clearerr(r->in);
        CHECK_EQ(fread(drain, 1, BLOCK, r->in), BLOCK);
    } else if (m == RECV) {
        CHECK_EQ(recv(r->sock[0], drain, BLOCK, 0), BLOCK);
    } else if (m != PREAD) {
        CHECK_EQ(read(r->pipe[0], drain, BLOCK), BLOCK);
    }
    return false;
}

static void one_read(struct reader *r)
{
    size_t i; /* among this reader's own share of the blocks */
    do
        i = (size_t)fa_rng_below(&r->rng, target_count / READERS) * READERS + r->share;
    while (!targets[i]);
    char *p = targets[i];
    enum method m = (enum method)fa_rng_below(&r->rng, METHODS);
    uint64_t tag = ++r->id;
    char data[BLOCK];
    fa_pattern_fill(data, BLOCK, tag);
    if (m == PREAD)
        CHECK_EQ(pwrite(r->file, data, BLOCK, 0), BLOCK);
    else
        CHECK_EQ(write(m == RECV ? r->sock[1] : r->pipe[1], data, BLOCK), BLOCK);
    if (!fill(r, m, p)) {
        atomic_fetch_add(&efaults[m], 1);
        return;
    }
    CHECK_MSG(fa_pattern_find_bad(p, BLOCK, tag) == (size_t)-1, "%s into %p: wrong bytes",
              method_names[m], (void *)p);
    /* The block keeps the pattern of its index, which the end of the round checks. */
    fa_pattern_fill(p, BLOCK, i);
}

static void *reader_main(void *arg)
{
    struct reader *r = arg;
    for (;;) {
        pthread_barrier_wait(&round_start);
        if (atomic_load(&all_done))
            return NULL;
        unsigned long n = 0;
        while (!atomic_load(&round_over)) {
            one_read(r);
            n++;
        }
        atomic_fetch_add(&reads_done, n);
        pthread_barrier_wait(&round_end);
    }
}

static void reader_open(struct reader *r, uint64_t seed)
{
    CHECK_EQ(pipe(r->pipe), 0);
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, r->sock), 0);
    r->file = memfd_create("efault-test", 0);
    CHECK(r->file >= 0);
    r->in = fdopen(r->pipe[0], "r");
    CHECK(r->in);
    CHECK_EQ(setvbuf(r->in, NULL, _IONBF, 0), 0);
    fa_rng_seed(&r->rng, seed);
}

/* A round: a fresh batch of blocks, a random 90 % freed; the readers fill the rest while this
 * thread runs meshing passes (the purge thread runs them too); then every block checked. */
static void round_run(fa_rng *rng)
{
    target_count = BATCH;
    for (size_t i = 0; i < BATCH; i++) {
        targets[i] = fa_malloc(BLOCK);
        CHECK(targets[i]);
        fa_pattern_fill(targets[i], BLOCK, i);
    }
    for (size_t i = 0; i < BATCH; i++)
        if (fa_rng_below(rng, 10)) {
            fa_free(targets[i]);
            targets[i] = NULL;
        }
    atomic_store(&round_over, 0);
    pthread_barrier_wait(&round_start);
    for (int pass = 0; pass < 4; pass++)
        fa_collect();
    atomic_store(&round_over, 1);
    pthread_barrier_wait(&round_end);
    for (size_t i = 0; i < BATCH; i++)
        if (targets[i]) {
            CHECK_MSG(fa_pattern_find_bad(targets[i], BLOCK, i) == (size_t)-1,
                      "block %zu (%p) lost its data", i, targets[i]);
            fa_free(targets[i]);
        }
}

/* Whether this process may catch the kernel's own faults with userfaultfd (what keeps a
 * merge's frames writable by the kernel: docs/design.md, "Meshing"). */
static bool kernel_faults_catchable(void)
{
    int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        fd = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC) >= 0 ? 0 : -1;
    if (fd > 0)
        close(fd);
    return fd >= 0;
}

static void case_reads(void)
{
    static struct reader readers[READERS];
    pthread_t t[READERS];
    CHECK_EQ(pthread_barrier_init(&round_start, NULL, READERS + 1), 0);
    CHECK_EQ(pthread_barrier_init(&round_end, NULL, READERS + 1), 0);
    for (size_t i = 0; i < READERS; i++) {
        reader_open(&readers[i], 100 + i);
        readers[i].share = i;
        CHECK_EQ(pthread_create(&t[i], NULL, reader_main, &readers[i]), 0);
    }
    _fa_mesh_test_window_hook = hold_window_open;
    fa_rng rng;
    fa_rng_seed(&rng, 7);
    uint64_t merges = fa_test_stats().mesh_merges;
    size_t rounds = 0;
    while (atomic_load(&reads_done) < reads_wanted) {
        round_run(&rng);
        rounds++;
    }
    merges = fa_test_stats().mesh_merges - merges;
    atomic_store(&all_done, 1);
    pthread_barrier_wait(&round_start);
    for (size_t i = 0; i < READERS; i++)
        CHECK_EQ(pthread_join(t[i], NULL), 0);
    _fa_mesh_test_window_hook = NULL;
    unsigned long failed = 0;
    for (int m = 0; m < METHODS; m++)
        failed += atomic_load(&efaults[m]);
    fprintf(stderr,
            "%lu reads in %zu rounds, %llu merges; EFAULT: read %lu, readv %lu, recv %lu, fread "
            "%lu, pread %lu\n",
            atomic_load(&reads_done), rounds, (unsigned long long)merges,
            atomic_load(&efaults[READ]), atomic_load(&efaults[READV]), atomic_load(&efaults[RECV]),
            atomic_load(&efaults[FREAD]), atomic_load(&efaults[PREAD]));
    CHECK_EQ(failed, 0);
    if (kernel_faults_catchable())
        CHECK(merges > 0);
}

int main(int argc, char **argv)
{
    if (FA_TEST_SANITIZED) {
        puts("mesh/mesh_efault: skipped under a sanitizer (meshing is off under ASan; TSan cannot "
             "see the kernel's writes wait)");
        return 77;
    }
    if (argc < 2) {
        const char *env[] = {"FITALLOC_MESH=1", "FITALLOC_MESH_PERIOD=1", NULL};
        char *args[] = {argv[0], (char *)"reads", NULL};
        fa_test_rerun("reads", env, args);
        return 0;
    }
    CHECK_EQ(fa_option_get("MESH"), 1);
    reads_wanted = fa_test_ops(1000000);
    case_reads();
    return 0;
}

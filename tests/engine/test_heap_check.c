/* ctest labels: unit */
/* The heap invariant checker (src/engine/check.c) must pass on a healthy heap and catch corruption:
 * a freed block whose free mark the program overwrote (free itself does not look at it again)
 * must be reported ("heap corrupted") with an abort. The corruption happens in a forked child. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "fitalloc.h"

/* Internal entry points, reachable because tests link the static library. */
typedef struct fa_heap_s fa_heap_t;
void _fa_heap_check(const fa_heap_t *heap);
extern __thread fa_heap_t *_fa_heap_tls;

static void healthy_heap_passes(void)
{
    void *blocks[1000];
    for (int i = 0; i < 1000; i++)
        blocks[i] = fa_malloc((size_t)(i % 300) + 1);
    for (int i = 0; i < 1000; i += 3)
        fa_free(blocks[i]);
    _fa_heap_check(_fa_heap_tls); /* aborts the test if a healthy heap is reported corrupt */
    for (int i = 0; i < 1000; i++)
        if (i % 3)
            fa_free(blocks[i]);
    _fa_heap_check(_fa_heap_tls);
}

static void lost_free_mark_is_caught(void)
{
    int err[2];
    CHECK_EQ(pipe(err), 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        dup2(err[1], 2);
        void *keep = fa_malloc(48); /* keeps the page in use */
        void *p = fa_malloc(48);
        fa_free(p);
        ((uintptr_t *)p)[1] = 0; /* the corruption: a free block loses its free mark */
        _fa_heap_check(_fa_heap_tls);
        (void)keep;
        _exit(0); /* not reached if the checker works */
    }
    close(err[1]);
    char text[4096] = {0};
    size_t len = 0;
    ssize_t n;
    while (len < sizeof text - 1 && (n = read(err[0], text + len, sizeof text - 1 - len)) > 0)
        len += (size_t)n;
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "child status %d, stderr: %s",
              status, text);
    CHECK_MSG(strstr(text, "fitalloc: heap corrupted") != NULL, "stderr: %s", text);
}

int main(void)
{
    healthy_heap_passes();
    lost_free_mark_is_caught();
    printf("engine/heap_check: ok\n");
    return 0;
}

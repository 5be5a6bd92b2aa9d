/* The program of test_abnormal.sh: usage abnormal abort|double-free|forever.
 *   abort        50,000 malloc + free pairs, then abort(): no exit handler runs;
 *   double-free  a few calls, then frees a block twice (fitalloc reports it and aborts); the
 *                block's address is printed first on stderr as "block 0x...";
 *   forever      malloc + free pairs until killed. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *volatile sink;

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    if (!strcmp(argv[1], "abort")) {
        for (int i = 0; i < 50000; i++) {
            sink = malloc(16 + (size_t)(i % 100));
            free(sink);
        }
        abort();
    }
    if (!strcmp(argv[1], "double-free")) {
        for (int i = 0; i < 50; i++)
            free(malloc(40));
        char *p = malloc(40);
        char line[64];
        int n = snprintf(line, sizeof line, "block %p\n", (void *)p);
        if (write(2, line, (size_t)n) != n)
            return 3;
        free(p);
        free(p);
        return 4; /* not reached: the second free aborts */
    }
    if (!strcmp(argv[1], "forever")) {
        for (unsigned long i = 0;; i++) {
            sink = malloc(16 + i % 200);
            free(sink);
            if (i % 100 == 99)
                usleep(1000); /* a few buffers a second, not gigabytes */
        }
    }
    return 2;
}

/* ctest labels: reliability */
/* Memory a freed page still holds is used again before memory no block has used: sort's merge
 * buffers (16 blocks of 256 KiB made, written, freed in another order, made again) took new
 * blocks at every round while pages it had emptied waited for the purger, their memory
 * resident, and its peak RSS grew by a block per round that did so. Here, after the first
 * round, no round may hand out a block at an address the first did not (the purge delay is
 * long enough that nothing is purged in between). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "fitalloc.h"
#include "rerun.h"

#define BLOCKS 16
#define SIZE ((256u << 10) + 32)
#define ROUNDS 8
/* The first big blocks freed are held inaccessible for a while (src/engine/guard.c); these go
 * first, so that the rounds below see the plain free path. */
#define GUARD_FREES 20

static int child(void)
{
    CHECK_EQ(fa_option_get("purge_delay"), 60000);
    for (int i = 0; i < GUARD_FREES; i++) {
        void *p = fa_malloc(SIZE);
        CHECK(p != NULL);
        fa_free(p);
    }
    void *seen[BLOCKS * ROUNDS];
    size_t distinct = 0;
    unsigned r = 1;
    for (int round = 0; round < ROUNDS; round++) {
        void *b[BLOCKS];
        for (int i = 0; i < BLOCKS; i++) {
            b[i] = fa_malloc(SIZE);
            CHECK(b[i] != NULL);
            memset(b[i], 0x5a, SIZE);
            size_t k = 0;
            while (k < distinct && seen[k] != b[i])
                k++;
            if (k == distinct)
                seen[distinct++] = b[i];
        }
        CHECK_MSG(distinct == BLOCKS, "round %d: %zu distinct blocks handed out, for %d live",
                  round, distinct, BLOCKS);
        int order[BLOCKS];
        for (int i = 0; i < BLOCKS; i++)
            order[i] = i;
        for (int i = BLOCKS - 1; i > 0; i--) {
            r = r * 1103515245u + 12345u;
            int j = (int)((r >> 16) % (unsigned)(i + 1));
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (int i = 0; i < BLOCKS; i++)
            fa_free(b[order[i]]);
    }
    printf("engine/dirty_before_fresh: ok (%zu distinct blocks over %d rounds of %d)\n", distinct,
           ROUNDS, BLOCKS);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0)
        return child();
    const char *env[] = {"FITALLOC_PURGE_DELAY=60000", NULL};
    char *args[] = {argv[0], "child", NULL};
    fa_test_rerun("engine/dirty_before_fresh", env, args);
    return 0;
}

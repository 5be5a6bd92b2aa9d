/* fake_rand: a rand() that is not glibc's (LD_PRELOAD), for test_workloads.sh: the workloads
 * that reproduce the studies' size sequences must notice and refuse to run. */
#include <stdlib.h>

int rand(void)
{
    return 4;
}

void srand(unsigned seed)
{
    (void)seed;
}
